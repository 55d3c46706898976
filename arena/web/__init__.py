"""The served arena: one ASGI app (FastAPI on uvicorn) for the static site, the authors'
door (accounts, uploads, the validation queue, their pages) and the human seat.

- `app.py`: `create_app(site_dir, routers=...)` and `AppServer` (uvicorn on a socket bound
  at once; `arena serve`, `arena league --serve`, `arena play` use it);
Docs: docs/server.md.
"""
