"""An example osworld plugin: the metric `example_note_matches` and the agent `example-note-writer`."""
