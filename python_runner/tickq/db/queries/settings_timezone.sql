SELECT timezone FROM tickq.report_header_at()
