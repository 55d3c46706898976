"""A registry of bot folders: `arena submit` (vetted, built, smoke-tested, copied in by
content hash) and `arena bots` (`submit.py`)."""
