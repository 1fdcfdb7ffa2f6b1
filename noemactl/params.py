"""Converting command-line values without pydantic, so noemactl starts fast.

typer 0.29 converts every parameter through a pydantic `TypeAdapter` built on
first use: that imports pydantic and generates a schema per parameter, about
a third of the start-up of `noemactl status`, and the design wants the CLI
free of pydantic. noemactl's parameters are all plain (`str`, `bool`, `int`
with bounds, lists of those), so `PlainGroup` and `PlainCommand` (every group
and command of noemactl uses one) give each such parameter a converter
written here, raising typer's own `BadParameter` (exit 2) on bad values. A
parameter of another type, or a typer without the internals used here
(`_runtime_param`, `type_descriptor`), keeps typer's conversion: slower,
never wrong. Measured on 2 cores (median of 21 runs of `noemactl --json rules
list ada` with no daemon): 0.29 s with these converters, 0.39 s with typer's,
which imports pydantic; so the pin below typer 0.30 in pyproject.toml holds
this path to what it was tested on, and a typer without these internals only
costs the start-up they save.

The same classes make help read like git's or systemctl's, whatever typer's
defaults: `install` gives each parameter the `PlainArgument`/`PlainOption`
display (usage `MIND TEXT`, not `{MIND} {TEXT}`; an option's value named by
its metavar, never `<str>`; no type after a flag; each default once, never
`(100)`; a range only where it says something), and `PlainGroup` lists
commands with their whole first sentence. noemactl's typer app has
`rich_markup_mode=None`, so help and errors are plain text with no panels,
whatever the terminal; `scripts/gendocs.py` writes the man page from the same
parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, get_args, get_origin

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

Convert = Callable[[Any], Any]
_TRUE = {"1", "true", "t", "yes", "y", "on"}
_FALSE = {"0", "false", "f", "no", "n", "off", ""}


def _to_str(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = _to_str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{value!r} is not a boolean; use true or false")


def _to_int(low: float | None, high: float | None) -> Convert:
    def convert(value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a whole number")
        if isinstance(value, int):
            number = value
        else:
            try:
                number = int(_to_str(value).strip())
            except ValueError:
                raise ValueError(f"{value!r} is not a whole number") from None
        if low is not None and high is not None and not low <= number <= high:
            raise ValueError(f"{number} is not between {low:g} and {high:g}")
        if low is not None and number < low:
            raise ValueError(f"{number} is less than {low:g}")
        if high is not None and number > high:
            raise ValueError(f"{number} is more than {high:g}")
        return number

    return convert


def converter(annotation: Any, info: Any) -> Convert | None:
    """A plain converter for `annotation`, or None when typer must do it."""
    if getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
        return None
    if annotation is str:
        return _to_str
    if annotation is bool:
        return _to_bool
    if annotation is int and not getattr(info, "clamp", False):
        return _to_int(getattr(info, "min", None), getattr(info, "max", None))
    if get_origin(annotation) is list and len(get_args(annotation)) == 1:
        item = converter(get_args(annotation)[0], info)
        if item is not None:
            return lambda values: [item(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    return None


class PlainConversion:
    """Stands in for typer's runtime conversion of one parameter (the same `coerce` contract)."""

    def __init__(self, convert: Convert) -> None:
        self.convert = convert

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """Convert one parsed value; None stays None (or `()` for a repeatable option)."""
        multi = getattr(param, "multiple", False) or param.nargs == -1
        if value is None:
            return () if multi else None
        if multi and isinstance(value, str):
            raise typer.BadParameter("Value must be an iterable.", ctx=ctx, param=param)
        try:
            return self.convert(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None


def describe_range(low: float | None, high: float | None) -> str | None:
    """A range as help shows it (`1 to 1000`, `at most 6`), or None when it says nothing.

    A lone lower bound of 0 or 1 is every id and count; printing `x>=1` on
    each of them is noise, and a bad value gets an error that says it.
    """
    if low is not None and high is not None:
        return f"{low:g} to {high:g}"
    if high is not None:
        return f"at most {high:g}"
    if low is not None and low not in (0, 1):
        return f"at least {low:g}"
    return None


def _default_string(param: Any, base: Any, ctx: Any, show_default_is_str: bool, default_value: Any) -> str:
    # typer wraps a written default in parentheses (`[default: (100)]`); the text is the default.
    if show_default_is_str:
        return str(param.show_default)
    return str(base(param, ctx=ctx, show_default_is_str=show_default_is_str, default_value=default_value))


# Each class subclasses typer's directly (no shared mixin): `install` swaps a
# parameter's class in place, which Python allows only between classes of the
# same layout, and a mixin base changes it.


class PlainArgument(TyperArgument):
    """An argument shown as `MIND` (required) or `[MIND]` (optional), with no type."""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw + ("..." if self.nargs != 1 else "")
        return name if self.required else f"[{name}]"

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _get_default_string(self, *, ctx: Any, show_default_is_str: bool, default_value: Any) -> str:
        return _default_string(self, TyperArgument._get_default_string, ctx, show_default_is_str, default_value)

    def _get_number_range_help_str(self) -> str | None:
        return describe_range(self.min, self.max)

    def get_help_record(self, ctx: Any) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        if record is None:
            return None
        # The usage line already says which arguments are required.
        name, help_text = record
        return name, help_text.replace("; required]", "]").replace("  [required]", "").replace("[required]", "")


class PlainOption(TyperOption):
    """An option shown as `--limit N`; a flag as itself."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        word = self.metavar or (self.name or "value").upper()
        return word + ("..." if self.nargs != 1 else "")

    def _get_default_string(self, *, ctx: Any, show_default_is_str: bool, default_value: Any) -> str:
        return _default_string(self, TyperOption._get_default_string, ctx, show_default_is_str, default_value)

    def _get_number_range_help_str(self) -> str | None:
        return describe_range(self.min, self.max)


def _plain_display(param: Any) -> None:
    if type(param) is TyperArgument:
        param.__class__ = PlainArgument
    elif type(param) is TyperOption:
        param.__class__ = PlainOption


def install(params: Iterable[Any]) -> None:
    """Give each parameter the plain display, and each plain one a plain converter (others keep typer's)."""
    for param in params:
        _plain_display(param)
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", False) is not None:
            continue
        convert = converter(descriptor.annotation, descriptor.parameter_info)
        if convert is not None:
            param._runtime_param = PlainConversion(convert)


class PlainGroup(TyperGroup):
    """A command group whose plain parameters (and help option) convert without pydantic."""

    def get_params(self, ctx: Any) -> list[Any]:
        """The group's parameters, as click parses them."""
        params = super().get_params(ctx)
        install(params)
        return params

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """List the commands with their whole first sentence, wrapped (click cuts it at the width with `...`)."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class PlainCommand(TyperCommand):
    """A command whose plain parameters (and help option) convert without pydantic."""

    def get_params(self, ctx: Any) -> list[Any]:
        """The command's parameters, as click parses them."""
        params = super().get_params(ctx)
        install(params)
        return params


class DefaultGroup(PlainGroup):
    """A group that runs its `default` command when the first word names none of its commands.

    So `noemactl jobs ada` is `noemactl jobs list ada`, while `noemactl jobs
    show 7` runs `show`; the default stays reachable by name for a mind that
    happens to be called like a command.
    """

    default = ""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Put the default command's name in front unless the arguments start with a command or --help.

        Completing the first word (`consolidate <TAB>`, a resilient parse with
        no words yet) stays on the group, so it can offer both.
        """
        completing_first_word = ctx.resilient_parsing and not args
        if self.default and not completing_first_word and (
            not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names)
        ):
            args = [self.default, *args]
        return super().parse_args(ctx, args)

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        """The first word: the group's commands, and what the default command's first argument takes (a mind)."""
        results = super().shell_complete(ctx, incomplete)
        command = self.get_command(ctx, self.default) if self.default else None
        if command is None or incomplete.startswith("-"):
            return results
        with command.make_context(self.default, [], parent=ctx, resilient_parsing=True) as sub:
            for param in command.get_params(sub):
                if param.param_type_name == "argument":
                    results.extend(param.shell_complete(sub, incomplete))
                    break
        return results


def default_group(command: str) -> type[DefaultGroup]:
    """A `DefaultGroup` class whose default command is `command` (typer takes a class, not an instance)."""
    return type(f"DefaultGroup_{command}", (DefaultGroup,), {"default": command})
