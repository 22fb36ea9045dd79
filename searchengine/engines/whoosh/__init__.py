"""The Whoosh engine."""
