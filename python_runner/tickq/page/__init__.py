"""The status page: what the database answers, laid out and rendered as one HTML file."""
