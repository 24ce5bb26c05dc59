"""``python -m deepcite.cli`` runs the command line."""

from deepcite.cli.main import app

app()
