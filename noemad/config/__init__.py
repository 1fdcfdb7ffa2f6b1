"""noemad.toml and a mind's settings.

The whole file is `schema.Config`, assembled from one module per part:
`daemon` ([daemon], [timeline]), `models` ([models], [budgets], [pricing]),
`schedules` ([schedules], [archive]), `gate` ([gate], a mind's seed of wake
rules), `governance`, `replica`, `connectors` and `mind` (one mind's
settings, from the file or stored); `section` is their shared base and value
checks. The file on disk is `files`, and the sentences for what fails
validation are `problems`.
"""
