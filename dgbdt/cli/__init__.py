"""The command line (commands) and the README's distributed demo (demo)."""
