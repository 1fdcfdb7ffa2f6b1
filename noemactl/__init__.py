"""noemactl: the command-line client of noemad.

It speaks only HTTP over the daemon's Unix socket and never imports the engine
(`noemad`), so it starts fast: modules here import little at the top, and the
heavy ones (httpx, rich) are loaded only by the commands that need them.

Keep this file free of code: an editable install made before it existed
treats `noemactl` as a namespace package and never runs it.
"""
