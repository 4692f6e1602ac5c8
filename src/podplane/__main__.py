from podplane.cli import app

app()
