"""noemad.toml and a mind's settings: the schema (`schema`), the file on disk (`files`), and the sentences for what fails validation (`problems`)."""
