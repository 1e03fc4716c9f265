"""Persistence: SQLAlchemy tables, repositories and Alembic migrations (SQLite or PostgreSQL).

The only package that imports SQLAlchemy. Services use it through `Database.read()` and
`Database.write()`, which hand out a unit of work of repositories and own nothing else.
"""
