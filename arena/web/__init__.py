"""The served arena: one ASGI app (FastAPI on uvicorn) for the static site, the authors'
door (accounts, uploads, the validation queue, their pages) and the human seat.

- `app.py`: `create_app(site_dir, routers=...)` and `AppServer` (uvicorn on a socket bound
  at once; `arena serve`, `arena league --serve`, `arena play` use it);
- `league_games.py`: a league's game pages, game lists and replays, answered from its store;
- `authors.py`: the door's book (accounts, scrypt-hashed tokens, names owned, submissions);
- `unpack.py`: an upload unpacked into quarantine, hostile archives refused;
- `submissions.py`: the JSON API (`door_router`, `Door`) and the per-address limit;
- `queue.py`, `validate.py`: the validation queue and one check in a child process;
- `door_pages.py`: `/door/` and `door_app` (the whole served arena with the door);
- `stderr.py`: a bot's stderr kept for its author on a served league;
- `client.py`: `arena submit --to URL` (its command: `arena/cli/authors.py`, with `arena authors`);
- `play_routes.py`: the human seat over HTTP (`play_router`: page, assets, WebSocket);
  `door_play.py`: a signed-in author plays any ladder bot; `play_server.py`: `arena play`;
- `settings.py`: a league file's `[server]` table; `errors.py`: `WebError`.
Docs: docs/server.md.
"""
