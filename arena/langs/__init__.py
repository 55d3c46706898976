"""Bots in any language: one image per language (`images`), the `build` step of bot.toml
run in the sandbox the bot runs in (`build`), and the starter kits `arena new` copies
(`kits`). Only `images` is imported here: it is a leaf the Docker sandbox uses."""
