"""``arena view``: a local web app over results folders, evaluations and report cards (runs and their
leaderboards, every episode as a transcript, a drawing per game, live runs, a static export), and
``arena play --web``, a person's seat in the page. Needs the ``view`` extra (Starlette, uvicorn,
Jinja2); it reads folders and never writes or locks them.
"""
