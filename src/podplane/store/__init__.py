"""Our own tables (tokens, sessions, audit, operations) through SQLAlchemy 2 + Alembic."""
