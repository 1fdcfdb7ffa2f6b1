"""The man pages and shell completions keep up with the code.

Every command path, argument and option of noemactl, every noemad option and
every noemad.toml table and key must be in the committed man pages; the
committed files must equal what `scripts/gendocs.py` generates now; and
completion through the installed `noemactl` must offer the app's commands and
options. When one of these fails: run `make docs` and commit the result.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAKE_DOCS = "run `make docs` (python scripts/gendocs.py) and commit the result"
NOEMACTL = shutil.which("noemactl", path=str(Path(sys.executable).parent)) or shutil.which("noemactl")


def load_gendocs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("noema_gendocs", ROOT / "scripts" / "gendocs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


gendocs = load_gendocs()


# helpers -------------------------------------------------------------------------------


def roff(text: str) -> str:
    """How the generator spells plain text in roff (independent of its own helper)."""
    return text.replace("\\", r"\e").replace("-", r"\-")


def bold(text: str) -> str:
    return rf"\fB{roff(text)}\fR"


def italic(text: str) -> str:
    return rf"\fI{roff(text)}\fR"


def read(rel: str) -> str:
    path = ROOT / rel
    assert path.is_file(), f"{rel} is missing; {MAKE_DOCS}"
    return path.read_text(encoding="utf-8")


def split_sections(text: str, macro: str) -> dict[str, str]:
    """The body of each `.SH`/`.SS` section, keyed by its heading (quotes removed)."""
    parts = re.split(rf"^\{macro} (.*)$", text, flags=re.M)
    return {heading.strip().strip('"'): body for heading, body in zip(parts[1::2], parts[2::2])}


@pytest.fixture(scope="module")
def pages() -> list[Any]:
    return list(gendocs.walk())


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return gendocs.generate()


@pytest.fixture(scope="module")
def noemactl_man() -> str:
    return read("man/noemactl.1")


# (1) noemactl.1 covers every command path and option -------------------------------------


def test_the_walk_finds_commands_and_a_group(pages: list[Any]) -> None:
    names = [p.name for p in pages]
    assert names[0] == "" and len(names) > 1
    assert any(p.is_group and p.path for p in pages), "expected at least one sub-group (e.g. `mind`)"


def test_every_command_path_has_a_man_entry(pages: list[Any], noemactl_man: str) -> None:
    headings = set(split_sections(noemactl_man, ".SS"))
    missing = [p.name for p in pages[1:] if roff(p.name) not in headings]
    assert not missing, f"man/noemactl.1 has no .SS for {missing}; {MAKE_DOCS}"


def test_every_option_and_argument_is_in_its_command_entry(pages: list[Any], noemactl_man: str) -> None:
    entries = split_sections(noemactl_man, ".SS")
    global_options = split_sections(noemactl_man, ".SH")["GLOBAL OPTIONS"]
    missing = []
    for page in pages:
        body = entries.get(roff(page.name), "") if page.path else global_options
        for param in page.command.params:
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "option":
                spellings = [bold(o) for o in [*param.opts, *param.secondary_opts]]
            else:
                spellings = [italic(param.metavar or param.name.upper())]
            missing += [f"{page.name or 'noemactl'} {s}" for s in spellings if s not in body]
    help_option = pages[0].command.get_help_option(pages[0].ctx)
    if help_option is not None:
        missing += [f"noemactl {o}" for o in help_option.opts if bold(o) not in global_options]
    assert not missing, f"man/noemactl.1 lacks {missing}; {MAKE_DOCS}"


def test_noemactl_man_has_the_required_sections(noemactl_man: str) -> None:
    sections = split_sections(noemactl_man, ".SH")
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "ENVIRONMENT", "EXIT STATUS", "FILES", "SEE ALSO"):
        assert name in sections, f"man/noemactl.1 has no {name} section"
    for variable in ("NOEMA_SOCKET", "NO_COLOR"):
        assert variable in sections["ENVIRONMENT"]
    for code in "0123":
        assert bold(code) in sections["EXIT STATUS"]
    assert r"\fBnoemad\fR(8)" in sections["SEE ALSO"] and r"\fBnoemad.toml\fR(5)" in sections["SEE ALSO"]


# (2) noemad.8 covers every option of its parser ----------------------------------------------


def test_every_noemad_option_is_in_its_man_page() -> None:
    from noemad.main import build_parser

    options = split_sections(read("man/noemad.8"), ".SH")["OPTIONS"]
    actions = [a for a in build_parser()._actions if a.help is not argparse.SUPPRESS]
    missing = [o for a in actions for o in a.option_strings if bold(o) not in options]
    assert not missing, f"man/noemad.8 OPTIONS lacks {missing}; {MAKE_DOCS}"


def test_noemad_man_has_the_required_sections() -> None:
    sections = split_sections(read("man/noemad.8"), ".SH")
    for name in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SIGNALS", "SYSTEMD", "ENVIRONMENT", "FILES", "EXIT STATUS"):
        assert name in sections, f"man/noemad.8 has no {name} section"
    for variable in ("NOEMA_HOME", "NOEMA_SOCKET", "NOEMA_CLOCK", "STATE_DIRECTORY", "RUNTIME_DIRECTORY",
                     "CONFIGURATION_DIRECTORY", "NOTIFY_SOCKET", "WATCHDOG_USEC"):
        assert bold(variable) in sections["ENVIRONMENT"], variable
    for signal in ("SIGTERM", "SIGINT", "SIGHUP"):
        assert bold(signal) in sections["SIGNALS"], signal


# (3) noemad.toml.5 covers every table and key of Config -------------------------------------


def config_tables(model: Any, prefix: str = "") -> list[tuple[str, Any]]:
    from pydantic import BaseModel

    found = []
    for name, field in model.model_fields.items():
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            found.append((prefix + name, field.annotation))
            found += config_tables(field.annotation, f"{prefix}{name}.")
    return found


def test_every_config_table_and_key_is_in_its_man_page() -> None:
    from noemad.config.schema import Config

    sections = split_sections(read("man/noemad.toml.5"), ".SH")
    tables = config_tables(Config)
    assert tables, "Config has no tables?"
    missing = []
    for table, model in tables:
        body = sections.get(f"[{table}]")
        if body is None:
            missing.append(f"[{table}]")
            continue
        for key, field in model.model_fields.items():
            if (f"{table}.{key}", field.annotation) in tables:
                continue  # a nested table, checked as a table
            if bold(key) not in body:
                missing.append(f"{table}.{key}")
            elif field.description and roff(field.description.strip().splitlines()[0]) not in body:
                missing.append(f"{table}.{key} (its description)")
    assert not missing, f"man/noemad.toml.5 lacks {missing}; {MAKE_DOCS}"
    for name in ("RELOAD", "EXAMPLE"):
        assert name in sections, f"man/noemad.toml.5 has no {name} section"


def test_config_keys_named_in_the_prose_exist() -> None:
    """Hand-written text (SIGNALS, RELOAD, ...) names keys like daemon.shutdown_timeout: they must still exist."""
    from noemad.config.schema import Config

    valid = {name: set(model.model_fields) for name, model in config_tables(Config)}
    text = "\n".join(read(rel) for rel in ("man/noemactl.1", "man/noemad.8", "man/noemad.toml.5"))
    # Not after a placeholder: minds.NAME.gate.rules is a key of [minds.NAME.gate], not of [gate].
    named = re.findall(r"(?<!NAME\.)\b([a-z_]+(?:\.[a-z_]+)*)\.([a-z_]+)\b(?!: unknown key)", text)
    unknown = sorted({f"{t}.{k}" for t, k in named if t in valid and k not in valid[t]})
    assert not unknown, f"the man pages name keys noemad.toml does not have: {unknown}"


# (4) and (5): the committed files are what the generator makes now ---------------------------


@pytest.mark.parametrize("rel", [str(p) for p in gendocs.output_paths()])
def test_committed_file_is_current(rel: str, generated: dict[Path, str]) -> None:
    committed = read(rel)
    fresh = generated[Path(rel)]
    if committed != fresh:
        diff = "".join(
            list(difflib.unified_diff(committed.splitlines(True), fresh.splitlines(True), rel, "generated now"))[:40]
        )
        pytest.fail(f"{rel} is stale: {MAKE_DOCS}\n{diff}")


def test_stale_files_are_found(tmp_path: Path, generated: dict[Path, str]) -> None:
    assert set(gendocs.stale(generated, tmp_path)) == set(generated)
    assert set(gendocs.write(generated, tmp_path)) == set(generated)
    assert gendocs.stale(generated, tmp_path) == []
    first = tmp_path / next(iter(generated))
    first.write_text(first.read_text() + "# edited\n")
    assert gendocs.stale(generated, tmp_path) == [next(iter(generated))]


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("rel", ["man/noemactl.1", "man/noemad.8", "man/noemad.toml.5"])
def test_man_page_is_valid_roff(rel: str) -> None:
    done = subprocess.run(["groff", "-man", "-ww", "-z", "-Tutf8", str(ROOT / rel)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and not done.stderr.strip(), f"groff warns about {rel}:\n{done.stderr}"


# (5) completion through the installed noemactl -----------------------------------------------


def run_noemactl(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    assert NOEMACTL, "noemactl is not installed next to this python; run `make test`"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("_TYPER_", "_NOEMACTL_", "COMP_"))}
    # A socket nothing serves: completing mind names must not reach a real daemon.
    clean["NOEMA_SOCKET"] = str(tmp_path / "none.sock")
    return subprocess.run([NOEMACTL], env={**clean, **env}, capture_output=True, text=True, timeout=30)


def bash_complete(tmp_path: Path, words: list[str]) -> list[str]:
    """What bash would be offered for the last word of `noemactl WORDS`."""
    line = " ".join(["noemactl", *words])
    done = run_noemactl(
        tmp_path, _NOEMACTL_COMPLETE="complete_bash", COMP_WORDS=line, COMP_CWORD=str(len(words))
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def without_note(script: str) -> str:
    return "\n".join(line for line in script.splitlines() if not line.startswith("# ")).strip()


@pytest.mark.parametrize("shell", gendocs.SHELLS)
def test_committed_completion_is_what_noemactl_prints(shell: str, tmp_path: Path) -> None:
    done = run_noemactl(tmp_path, _NOEMACTL_COMPLETE=f"source_{shell}")
    assert done.returncode == 0, done.stderr
    committed = read(f"completions/noemactl.{shell}")
    assert without_note(committed) == done.stdout.strip(), f"completions/noemactl.{shell} is stale: {MAKE_DOCS}"


def test_bash_completion_offers_every_top_level_command(pages: list[Any], tmp_path: Path) -> None:
    expected = {p.path[0] for p in pages if len(p.path) == 1}
    offered = set(bash_complete(tmp_path, [""]))
    assert expected <= offered, f"not offered: {sorted(expected - offered)}"


def test_bash_completion_offers_a_groups_subcommands(pages: list[Any], tmp_path: Path) -> None:
    group = next(p for p in pages if p.is_group and p.path)
    expected = {p.path[-1] for p in pages if p.path[:-1] == group.path and len(p.path) == len(group.path) + 1}
    offered = set(bash_complete(tmp_path, [*group.path, ""]))
    assert expected and expected <= offered, f"`{group.name}` does not offer {sorted(expected - offered)}"


def test_bash_completion_offers_a_commands_options(pages: list[Any], tmp_path: Path) -> None:
    leaf = max((p for p in pages if p.path and not p.is_group), key=lambda p: len(p.command.params))
    expected = {
        o
        for param in leaf.command.params
        if param.param_type_name == "option" and not getattr(param, "hidden", False)
        for o in [*param.opts, *param.secondary_opts]
    }
    offered = set(bash_complete(tmp_path, [*leaf.path, "-"]))
    assert expected and expected <= offered, f"`{leaf.name} -` does not offer {sorted(expected - offered)}"


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completion_offer_the_top_level_commands(shell: str, pages: list[Any], tmp_path: Path) -> None:
    extra = {"_TYPER_COMPLETE_FISH_ACTION": "get-args"} if shell == "fish" else {}
    done = run_noemactl(tmp_path, _NOEMACTL_COMPLETE=f"complete_{shell}", _TYPER_COMPLETE_ARGS="noemactl ", **extra)
    assert done.returncode == 0, done.stderr
    missing = [p.path[0] for p in pages if len(p.path) == 1 and p.path[0] not in done.stdout]
    assert not missing, f"{shell} completion does not offer {missing}"


# (6) help text -------------------------------------------------------------------------------


def test_every_command_has_help_text(pages: list[Any]) -> None:
    bare = [p.name or "noemactl" for p in pages if not (p.command.help or p.command.short_help or "").strip()]
    assert not bare, f"commands without help text (give each a docstring or help=): {bare}"


def test_every_option_and_argument_has_help_text(pages: list[Any]) -> None:
    bare = [
        f"{p.name or 'noemactl'} {param.opts[0] if param.param_type_name == 'option' else param.name}"
        for p in pages
        for param in p.command.params
        if not getattr(param, "hidden", False) and not (getattr(param, "help", None) or "").strip()
    ]
    assert not bare, f"parameters without help text (give each help=): {bare}"
