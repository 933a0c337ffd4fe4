"""``python -m explorer`` is the ``explorer`` command."""

from explorer.cli import main

main()
