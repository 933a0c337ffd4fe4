"""The ``explorer`` command. Each area of the product has its own module here,
with the same names as the engine functions it calls.

Whatever goes wrong ends as one line on stderr and an exit status, never a traceback (:func:`failure`):
1 for a request the engine refused (an :class:`ExplorerError`) or could not carry out (the disk, the
database, a bug, a run that asked a model and had nothing come of it: :mod:`explorer.cli.run_outcome`), 2 for a
command line that does not parse (click's convention), 130 for Ctrl-C.
``EXPLORER_DEBUG=1`` shows the traceback of what was not a user error.

Every argument is checked before the command line is parsed (:func:`check_arguments`): one that no store could
keep (bytes that are not UTF-8, which Python reads as lone surrogates, or a NUL) is refused, naming its option or
argument, with status 2, before any command runs with it.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import typer
from typer._click.core import Command
from typer._click.exceptions import BadParameter, ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperArgument, TyperGroup, TyperOption

from explorer.cli import consolidate, corpus, db, demo, domains, dream, export, jobs, mcp, projection, serve, wander
from explorer.errors import ExplorerError, Remedy

DEBUG_ENV = "EXPLORER_DEBUG"


class ExplorerGroup(TyperGroup):
    """The root command: runs the command line asked for and turns anything it raises into one line
    (:func:`failure`). The console script and typer's ``CliRunner`` both come through here.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command; in standalone mode (the default) exit with its status, errors said in one line."""

        def run() -> Any:
            check_arguments(self, sys.argv[1:] if args is None else list(args))
            return super(ExplorerGroup, self).main(
                args, prog_name, complete_var, standalone_mode=False, windows_expand_args=windows_expand_args, **extra
            )

        if not standalone_mode:
            return run()
        sys.exit(run_guarded(run))


app = typer.Typer(
    cls=ExplorerGroup,
    name="explorer",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Dream Explorer: wander and dream over a body of knowledge, then review what was found.",
)
app.command()(corpus.ingest)
app.command()(corpus.enrich)
app.command()(corpus.stats)
app.command()(corpus.documents)
app.command()(demo.demo)
app.command(name="app")(demo.app)
app.command()(export.export)
app.command(name="map")(projection.map_)
app.command()(serve.serve)
app.command()(mcp.mcp)
app.command()(jobs.worker)
app.add_typer(dream.app, name="dream")
app.add_typer(wander.app, name="wander")
app.add_typer(consolidate.app, name="consolidate")
app.add_typer(jobs.app, name="jobs")
app.add_typer(db.app, name="db")
app.add_typer(domains.app, name="domains")


# How the command line says what would fix an engine error (the app phrases the same remedies as pages).
HINTS: dict[Remedy, str] = {
    Remedy.INGEST: "read documents first: explorer ingest PATH",
    Remedy.LIST_SESSIONS: "list sessions with: explorer wander list",
    Remedy.LIST_CRYSTALS: "list crystals with: explorer wander crystals",
    Remedy.RESUME_SESSION: "resume it with: explorer wander resume {subject}",
    Remedy.NEW_SESSION: "start a new session: explorer wander new",
    Remedy.FORCE_REVIEW: "add --force to change the decision",
    Remedy.OTHER_DATABASE: "use another --db, or set EXPLORER_EMBEDDING_MODEL to the model it was built with",
    Remedy.CONSOLIDATE: "consolidate first: explorer consolidate run",
    Remedy.LIST_JOBS: "list jobs with: explorer jobs list",
    Remedy.LIST_DREAMS: "list dreams with: explorer dream list",
    Remedy.CHECK_DATABASE: "check --db or EXPLORER_DB (commands that write, such as explorer ingest, create one)",
}


def error_line(exc: ExplorerError) -> str:
    """The one line the CLI prints for a user error: the engine's message, then the command that would fix it."""
    hint = HINTS.get(exc.remedy) if exc.remedy else None
    return f"error: {exc}" + (f"; {hint.format(subject=exc.subject or 'ID')}" if hint else "")


def usage_line(exc: UsageError) -> str:
    """The one line for a command line that does not parse: what is wrong with which option, the values it
    takes (a range, the choices), and where to read more (click's usage block would say less in more lines).
    """
    message = _parameter_message(exc) if isinstance(exc, BadParameter) else None
    if message is None:
        message = exc.format_message().rstrip(".")
        message = message[:1].lower() + message[1:]
    if message.endswith("?") or exc.ctx is None:  # "…. Did you mean 'wander'?" is hint enough
        return f"error: {message}"
    return f"error: {message}; see: {exc.ctx.command_path} --help"


class ArgumentNotText(ClickException):
    """An argument that is not text a store can hold; a command line that does not parse, so status 2."""

    exit_code = 2


def check_arguments(root: Command, args: Sequence[str]) -> None:
    """Refuse, as :class:`ArgumentNotText` naming it, the first argument that is not text a store can hold
    (:func:`explorer.inputs.text_fault`): a byte that is not UTF-8 (which Python reads as a lone surrogate) or a NUL.
    """
    from explorer.inputs import text_fault

    for index, arg in enumerate(args):
        if text_fault(arg) is not None:
            name, value = _argument_name(root, args, index)
            raise ArgumentNotText(f"{name} {text_fault(value)}")


def _argument_name(root: Command, args: Sequence[str], index: int) -> tuple[str, str]:
    """What the command line's ``args[index]`` is to the person, and the text of it that is the value: the option
    it gives a value to (``--name``, and of ``--name=value`` the value), the argument it stands for (``concept``),
    or its place ("argument 3") when the command line does not say.
    """
    command, arguments, waiting, literal = root, 0, "", False
    for position, token in enumerate(args[: index + 1]):
        if waiting:  # the value of the option before it
            if position == index:
                return waiting, token
            waiting = ""
        elif token == "--" and not literal:
            literal = True
        elif token.startswith("-") and len(token) > 1 and not literal:
            name, given, value = token.partition("=")
            option = next((p for p in command.params if isinstance(p, TyperOption) and name in p.opts), None)
            if position == index:
                return (name, value) if given and option is not None else (f"option {position + 1}", token)
            if option is not None and not given and not option.is_flag and option.nargs != 0:
                waiting = _parameter_name(option)
        else:
            sub = getattr(command, "commands", {}).get(token)
            if sub is not None and not arguments:  # a command of the group, not an argument of one
                command = sub
                continue
            expected = [p for p in command.params if isinstance(p, TyperArgument)]
            if position == index and expected:
                return _parameter_name(expected[min(arguments, len(expected) - 1)]), token
            arguments += 1
    return f"argument {index + 1}", args[index]


def _parameter_name(param: object) -> str:
    """An option by its longest name (``--seed-concept``), an argument by its own (``concept``)."""
    if isinstance(param, TyperOption):
        return max(param.opts, key=len)
    return param.get_error_hint().strip("'") if isinstance(param, TyperArgument) else str(param)


def _parameter_message(exc: BadParameter) -> str | None:
    """``--dreams must be at least 1, not 0``: a bad value in the option's own terms, or None to keep click's."""
    param = exc.param
    if param is None:
        return None
    name = _parameter_name(param)
    cause = exc.__cause__
    problems = cause.errors() if cause is not None and hasattr(cause, "errors") else []
    if not problems:
        return None  # click's own message (a missing option, a value a callback refused) says it already
    kind, value = problems[0]["type"], problems[0].get("input")
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    choices = getattr(getattr(param, "type_descriptor", None), "choices", None)
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"):
        if low is not None and high is not None:
            allowed = f"from {low} to {high}"
        else:
            allowed = f"at least {low}" if low is not None else f"at most {high}"
        return f"{name} must be {allowed}, not {value}"
    if kind.startswith("int_"):
        return f"{name} must be a whole number, not {value!r}"
    if kind.startswith("float_"):
        return f"{name} must be a number, not {value!r}"
    if choices:
        return f"{name} must be one of {', '.join(str(getattr(c, 'value', c)) for c in choices)}, not {value!r}"
    return f"{name}: {str(problems[0]['msg']).removeprefix('Value error, ').rstrip('.')}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def failure(exc: BaseException) -> tuple[str | None, int]:
    """The line to print for what a command raised (None: nothing more to say) and the exit status.

    Errors that are not the person's (the disk, the database, a bug) still end in one line, naming
    :data:`DEBUG_ENV`, which shows their traceback instead.
    """
    debug = " (run with EXPLORER_DEBUG=1 for the traceback)"
    if isinstance(exc, ExplorerError):
        return error_line(exc), 1
    if isinstance(exc, NoArgsIsHelpError):
        return None, 2  # the help is the message; typer has printed it already
    if isinstance(exc, UsageError):
        return usage_line(exc), exc.exit_code
    if isinstance(exc, ClickException):
        return f"error: {exc.format_message()}", exc.exit_code
    if isinstance(exc, typer.Abort):
        return "aborted", 130
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", 130
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"error: {where}{exc.strerror or _first_line(exc)}{debug}", 1
    store = sys.modules.get("explorer.store.database")  # not imported here: a command that never opened it
    if store is not None and isinstance(exc, store.DatabaseFailure):
        return f"error: {_first_line(exc)}{debug}", 1
    return f"internal error: {type(exc).__name__}: {_first_line(exc)}{debug}", 1


def run_guarded(run: Callable[[], Any]) -> int:
    """Run a command line and return its exit status, having said any failure in one line on stderr."""
    try:
        status = run()
    except (Exception, KeyboardInterrupt) as exc:
        line, status = failure(exc)
        if os.environ.get(DEBUG_ENV) and not isinstance(exc, (ExplorerError, ClickException, KeyboardInterrupt)):
            raise
        if line:
            sys.stderr.write(line + "\n")
        return status
    # Without standalone mode click returns an Exit's code (or the command's None) instead of raising it.
    return status if isinstance(status, int) else 0


def main() -> None:
    """Entry point of the ``explorer`` console script (and ``python -m explorer``).

    Whatever the command leaves behind is frozen out of the garbage collector before the interpreter shuts down:
    after a model call, the last collection walks litellm's many modules and models for about 2 s, which a
    process that is ending does not need (exit handlers, such as the runtime's flush, still run).
    """
    try:
        app(prog_name="explorer")
    finally:
        gc.freeze()
