"""The Anthropic API key: where the settings say to find it, and why there is none.

Apart from the provider (`noemad.models.anthropic`) so that reading the key's
state (`noemactl config`) does not import the Anthropic SDK, which alone takes
a good part of a second: a daemon with another provider, or none, starts without it.
"""

from __future__ import annotations

import os
import re

from noemad.config.files import NoCredentialsDirectory, NotARegularFile, credential_path, read_regular_file
from noemad.config.models import AnthropicSettings

NO_KEY = "no Anthropic API key: set ANTHROPIC_API_KEY or [models.anthropic] api_key_file"
_KEY_CHARS = re.compile(r"[\x21-\x7e]+")  # what a header value can carry unchanged: visible ASCII, no spaces


class KeyProblem(Exception):
    """Why there is no usable key (a sentence that never contains the key)."""


def resolve_api_key(settings: AnthropicSettings, environ: dict[str, str] | None = None) -> str:
    """The API key the settings name, stripped; `KeyProblem` says why there is none."""
    env = os.environ if environ is None else environ
    if settings.api_key_file:
        try:
            path = credential_path("[models.anthropic] api_key_file", settings.api_key_file, env)
        except NoCredentialsDirectory as exc:
            raise KeyProblem(str(exc)) from None
        try:
            text = read_regular_file(path)  # a FIFO here must not block the loop
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) if isinstance(exc, NotARegularFile) else type(exc).__name__
            raise KeyProblem(f"cannot read the Anthropic API key file {str(path)!r} ({reason}); check [models.anthropic] api_key_file") from None
        source = f"the file {str(path)!r}"
    else:
        text = env.get(settings.api_key_env, "")
        source = f"${settings.api_key_env}"
    key = text.strip()
    if not key:
        raise KeyProblem(f"{NO_KEY} ({source} is empty or unset)")
    if not _KEY_CHARS.fullmatch(key):
        raise KeyProblem(f"the Anthropic API key in {source} has characters no API key has (spaces, control or non-ASCII); check it")
    return key
