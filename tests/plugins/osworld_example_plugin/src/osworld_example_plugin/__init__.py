"""An example osworld plugin: the metric `example_note_matches`, the agent `example-note-writer` and the
model client `example-service`."""
