"""The base of every error a user can act on.

Surfaces show such an error as one line (the CLI on stderr with a non-zero exit,
the app as an error box); anything else is a bug and keeps its traceback.
"""


class ExplorerError(Exception):
    """A problem with the user's input, data or configuration; the message says what to do."""
