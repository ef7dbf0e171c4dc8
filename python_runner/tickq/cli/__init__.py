"""The command line: one module per command group; argparse lives only here; nothing imports
this package."""
