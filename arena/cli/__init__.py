"""The command line: `arena ...` (typer). Parses, calls the layers below, prints; nothing else."""
