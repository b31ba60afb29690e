"""``python -m contextwarden`` runs the command line."""

from contextwarden.cli import main

main()
