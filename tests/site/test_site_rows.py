"""Rows the site's writer makes in Python rather than in a template loop (a league renders
them after every batch: arena/site/writer.py `_h2h_rows`, `_recent_rows`) are byte for byte
what the loops they replaced rendered, with the same environment (autoescape, the same
filters), for cells and games of every kind: no model, never met, a forfeit, a fall and
a rise, and bot names that are markup."""

from __future__ import annotations

import random

from arena.site.pages import h2h_cells
from arena.site.templating import environment
from arena.site.writer import _h2h_rows, _recent_rows
from tests.report_helpers import HOSTILE

H2H_LOOP = """  {% for row in matrix_bots %}
    <tr><th class="rowhead"><span class="muted">{{ loop.index }}</span> <a href="bots/{{ row | slug }}.html" title="{{ row }}">{{ row }}</a></th>
    {% for col in matrix_bots %}
      {% if row == col %}<td class="self"></td>
      {% else %}{% set c = cells[row][col] %}
        <td class="{{ c.colour }}" style="--share: {{ c.tint }}" data-bot="{{ row }}" data-other="{{ col }}" title="{{ row }} ahead of {{ col }}: {% if c.model is not none %}{{ (100 * c.model_exact) | round(1) }}% by the ratings; {% endif %}{% if c.games %}{{ c.ahead }} of {{ c.games }} games seen{% else %}never at one table{% endif %}">
          {%- if c.model is not none %}<span class="model">{{ c.model }}%</span>{% endif %}
          <small class="seen">{% if c.games %}{{ c.seen }}% · {{ c.ahead }}/{{ c.games }}{% else %}not met{% endif %}</small></td>
      {% endif %}
    {% endfor %}
    </tr>
  {% endfor %}
"""

RECENT_LOOP = (
    '{% for r in recent %}{% set g = r.g %}{% set seat = r.seat %}<tr><td><a href="../games/{{ g.key }}.html">{{ g.key }}</a></td>'
    '<td>{{ g.round }}</td><td>{{ seat }}</td><td><span class="place p{{ g.places[seat] }}">{{ g.places[seat] }}</span>'
    '{% if g.forfeits[seat] %} <span class="tag bad">forfeit</span>{% endif %}</td><td>{{ g.scores[seat] | score }}</td>'
    '<td class="num">{{ "%.2f" | format(r.move[0]) }} <span class="{{ \'up\' if r.move[1] > 0.005 else (\'down\' if r.move[1] < -0.005 else \'same\') }}">{{ r.move[1] | signed }}</span></td>'
    '<td class="num">{{ r.move[2] }} <span class="{{ \'up\' if r.move[3] > 0 else (\'down\' if r.move[3] < 0 else \'same\') }}">{{ r.move[3] | rank_change }}</span></td>'
    '<td>{% for other in range(g.seats | length) %}{% if other != seat %}<span class="seatres"><span class="place p{{ g.places[other] }}">{{ g.places[other] }}</span> '
    '<a href="{{ g.seats[other] | slug }}.html">{{ g.seats[other] }}</a></span>{% endif %}{% endfor %}</td></tr>'
    '{% else %}<tr><td colspan="8" class="muted">No game yet.</td></tr>{% endfor %}'
)

NAMES = ["ann", HOSTILE, 'q"uote&amp', "bob@2", "cy"]


def test_the_head_to_head_rows_are_what_the_template_loop_made():
    rng = random.Random(27)
    loop = environment().from_string(H2H_LOOP)
    for trial in range(30):
        bots = rng.sample(NAMES, rng.randint(1, len(NAMES)))
        with_model = trial % 3 != 0  # a third without a model: the observed share decides
        model = {a: {b: rng.random() for b in bots if b != a} for a in bots} if with_model else {}
        together = {a: {b: rng.choice([0, 0, 1, 7, 40]) for b in bots if b != a} for a in bots}
        ahead = {a: {b: rng.randint(0, together[a][b]) for b in bots if b != a} for a in bots}
        cells = h2h_cells(bots, model, ahead, together)
        assert str(_h2h_rows(bots, cells)) == loop.render(matrix_bots=bots, cells=cells), trial


def test_a_bots_recent_rows_are_what_the_template_loop_made():
    rng = random.Random(13)
    loop = environment().from_string(RECENT_LOOP)
    assert str(_recent_rows([])) == loop.render(recent=[])
    for trial in range(30):
        recent = []
        for number in range(rng.randint(1, 6)):
            seats = rng.sample(NAMES, rng.randint(2, 4))
            places = [rng.randint(1, len(seats)) for _ in seats]
            game = {
                "key": f"{number:05d}-0000{trial % 9}-0", "round": number + 1, "seats": seats, "places": places,
                "scores": [rng.choice([0.0, 1.0, 2.5, -3.0, 12.0]) for _ in seats],
                "forfeits": [rng.random() < 0.3 for _ in seats],
            }
            move = [rng.uniform(-5, 40), rng.choice([0.0, 0.004, -0.004, 0.5, -1.25]), rng.randint(1, 9), rng.randint(-3, 3)]
            recent.append({"g": game, "seat": rng.randrange(len(seats)), "move": move})
        assert str(_recent_rows(recent)) == loop.render(recent=recent), trial
