"""`python -m noemactl` runs the CLI."""

from noemactl.app import main

main()
