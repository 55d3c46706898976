"""arena: a tournament runner for card-game bots (the layers above `engine`)."""

__version__ = "0.1.0"
