"""Opening books: the Polyglot format (writer, the engine's OwnBook prober) and the builder
behind `zerochess book build`. The suites for matches live in the repository's `books/`."""

from zerochess.book.polyglot import BookEntry, BookError, BookProber, read_entries, write_book

__all__ = ["BookProber", "BookError", "BookEntry", "read_entries", "write_book"]
