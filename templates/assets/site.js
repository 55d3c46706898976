/* arena site: what the standings, bot, head-to-head and game-list pages do in the browser.

   - Sortable tables: click a column header (or press Enter on it) to sort by it; again to
     reverse. A first click puts the best first: the largest number first, the smallest
     for places (headers with data-first="ascending": rank, band, average place), text
     from A to Z. Cells may carry data-value to sort by a raw number.
   - The standings' search box shows only the bots whose name holds what is typed.
   - Game lists: a bot's page lists every game of the bot, and the game list filtered by
     a bot does too, from the bot's data scripts (data/bots/<slug>/<n>.js, a thousand
     games each, written by arena/site/writer.py), filtered by round and table-mate, 50
     to a page. The game list filtered by round jumps to the pages that hold the round
     (data/rounds/<n>.js, a thousand rounds each).
     Filters live in the address (#bot=...&round=...&with=...&page=...), so a filtered
     list can be shared.
   - The rating chart of a bot's page: the point nearest the pointer (or chosen with the
     arrow keys) is read out under the chart with a link to its game.
   - A league's standings: "hide retired versions" hides the rows of replaced versions.
   - A page that live.js reloads (a running league re-rendered the site) comes back as the
     reader left it: what was typed in the standings' search box, "hide retired versions",
     the column each table was sorted by, and where the page was scrolled to
     (`window.arenaKeep` saves them in sessionStorage just before the reload).

   - Served with the authors' door (`arena serve --submissions`, `arena league --serve`),
     the menu shows "Submit a bot" (its /door/ page): the server says it has one in a
     header, read once per page, over HTTP only.

   Everything a bot controls (its name) is written with textContent, never as markup. */
(function () {
  "use strict";
  var forEach = function (list, fn) { Array.prototype.forEach.call(list, fn); };
  var ROOT = (function () {
    var me = document.currentScript && document.currentScript.getAttribute("src");
    return me ? me.replace(/assets\/site\.js$/, "") : "";
  })();

  /* --- the authors' door, when this server has one ------------------------------------ */

  // A server with the door says so in a header of every answer (x-arena-door): asked of
  // live.json, a file every site has, so a site served alone is never asked for a missing one.
  var door = document.querySelector("a.door-link");
  if (door && /^https?:$/.test(location.protocol) && window.fetch) {
    fetch(ROOT + "live.json", { method: "HEAD", cache: "no-store" }).then(function (answer) {
      if (answer.headers.get("x-arena-door")) door.hidden = false;
    }).catch(function () {});
  }

  /* --- sortable tables --------------------------------------------------------------- */

  function cellValue(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    if (numeric) { var n = parseFloat(raw); return isNaN(n) ? null : n; }
    return raw.toLowerCase();
  }
  function firstOrder(header) {
    if (header.hasAttribute("data-first")) return header.getAttribute("data-first");
    return header.getAttribute("data-type") === "num" ? "descending" : "ascending";
  }
  function sortBy(table, header) {
    var headers = table.tHead.rows[0].cells;
    var index = Array.prototype.indexOf.call(headers, header);
    var numeric = header.getAttribute("data-type") === "num";
    var now = header.getAttribute("aria-sort");
    var order = now === "ascending" ? "descending" : now === "descending" ? "ascending" : firstOrder(header);
    var sign = order === "ascending" ? 1 : -1;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
      if (x === y) return 0;
      if (x === null) return 1;  // a row without a value goes last either way
      if (y === null) return -1;
      return (x < y ? -1 : 1) * sign;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    forEach(headers, function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", order);
  }
  forEach(document.querySelectorAll("table.sortable"), function (table) {
    forEach(table.tHead.rows[0].cells, function (header) {
      header.tabIndex = 0;
      header.title = "sort by " + header.textContent;
      header.addEventListener("click", function () { sortBy(table, header); });
      header.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(table, header); }
      });
    });
  });

  /* --- a live reload keeps what the reader chose -------------------------------------- */

  var KEPT = "arena-kept:" + location.pathname;
  var KEPT_INPUTS = ["standings-search", "hide-retired"];
  window.arenaKeep = function () {
    var state = {scroll: window.scrollY, inputs: {}, sorted: []};
    KEPT_INPUTS.forEach(function (id) {
      var input = document.getElementById(id);
      if (input) state.inputs[id] = input.type === "checkbox" ? input.checked : input.value;
    });
    forEach(document.querySelectorAll("table.sortable"), function (table, at) {
      forEach(table.tHead.rows[0].cells, function (header, column) {
        if (header.hasAttribute("aria-sort")) state.sorted.push([at, column, header.getAttribute("aria-sort")]);
      });
    });
    try { sessionStorage.setItem(KEPT, JSON.stringify(state)); } catch (error) { /* storage off: a plain reload */ }
  };
  var kept = null;
  try {
    kept = JSON.parse(sessionStorage.getItem(KEPT) || "null");
    sessionStorage.removeItem(KEPT);
  } catch (error) { kept = null; }
  if (kept) {
    Object.keys(kept.inputs || {}).forEach(function (id) {
      var input = document.getElementById(id);
      if (!input) return;
      if (input.type === "checkbox") input.checked = !!kept.inputs[id]; else input.value = kept.inputs[id];
    });
    var tables = document.querySelectorAll("table.sortable");
    (kept.sorted || []).forEach(function (sorted) {
      var table = tables[sorted[0]], header = table && table.tHead.rows[0].cells[sorted[1]];
      if (!header) return;
      for (var turn = 0; turn < 2 && header.getAttribute("aria-sort") !== sorted[2]; turn++) sortBy(table, header);
    });
    window.addEventListener("load", function () { window.scrollTo(0, kept.scroll || 0); });
  }

  /* --- a league's retired versions ----------------------------------------------------- */

  var hideRetired = document.getElementById("hide-retired");
  if (hideRetired) {
    var showRetired = function () {
      document.getElementById("standings").classList.toggle("hide-retired", hideRetired.checked);
    };
    hideRetired.addEventListener("change", showRetired);
    showRetired();  // as kept over a live reload, or by the browser
  }

  /* --- the standings' search box ------------------------------------------------------ */

  var search = document.getElementById("standings-search");
  if (search) {
    var rows = document.querySelectorAll("#standings tbody tr");
    var found = document.getElementById("standings-found");
    var filter = function () {
      var text = search.value.trim().toLowerCase(), shown = 0;
      forEach(rows, function (row) {
        var hit = !text || row.getAttribute("data-bot").toLowerCase().indexOf(text) >= 0;
        row.hidden = !hit;
        shown += hit ? 1 : 0;
      });
      found.textContent = text ? shown + " of " + rows.length + " bots" : "";
    };
    search.closest("form").hidden = false;
    search.closest("form").addEventListener("submit", function (event) { event.preventDefault(); filter(); });
    search.addEventListener("input", filter);
    filter();  // a value the browser kept from before
  }

  /* --- data scripts, the address ------------------------------------------------------ */

  function data(key) { return (window.ARENA_DATA || {})[key]; }
  function load(key, src, done, failed) {
    if (data(key)) { done(data(key)); return; }
    var script = document.createElement("script");
    script.src = ROOT + src;
    script.onload = function () { if (data(key)) done(data(key)); else failed(); };
    script.onerror = failed;
    document.head.appendChild(script);
  }
  /* A bot's games: its data scripts (data/bots/<slug>/1.js, 2.js, ..., site.rows_per_script
     games each, as many as its `games` need), loaded at once and joined in order. */
  function loadRows(site, bot, done, failed) {
    var key = "bot:" + bot[1], scripts = Math.ceil(bot[2] / site.rows_per_script), parts = [], left = scripts, broken = false;
    if (data(key)) { done(data(key)); return; }
    var joined = function () {
      window.ARENA_DATA[key] = [].concat.apply([], parts);
      done(data(key));
    };
    if (!scripts) { window.ARENA_DATA = window.ARENA_DATA || {}; joined(); return; }
    for (var n = 1; n <= scripts; n++) (function (n) {
      load(key + "/" + n, "data/bots/" + bot[1] + "/" + n + ".js", function (rows) {
        parts[n - 1] = rows;
        if (--left === 0 && !broken) joined();
      }, function () { if (!broken) { broken = true; failed(); } });
    })(n);
  }
  function readAddress() {
    var state = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var at = part.indexOf("=");
      if (at > 0) state[decodeURIComponent(part.slice(0, at))] = decodeURIComponent(part.slice(at + 1).replace(/\+/g, " "));
    });
    return state;
  }
  function address(state) {
    var parts = [];
    ["bot", "round", "with", "page"].forEach(function (name) {
      if (state[name]) parts.push(name + "=" + encodeURIComponent(state[name]));
    });
    return parts.length ? "#" + parts.join("&") : "";
  }
  function setAddress(state) {
    var hash = address(state);
    if (hash !== location.hash) history.replaceState(null, "", hash || location.pathname + location.search);
  }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function signed(value) {
    var text = Math.abs(value).toFixed(2);
    return text === "0.00" ? text : (value > 0 ? "+" : "\u2212") + text;
  }
  function rankChange(places) {
    return places > 0 ? "\u25b2" + places : places < 0 ? "\u25bc" + (-places) : "\u2013";
  }
  function trend(value, text) {
    return el("span", value > 0 ? "up" : value < 0 ? "down" : "same", text);
  }
  function place(number) { return el("span", "place p" + number, String(number)); }

  /* --- a bot's games: filters, pages ---------------------------------------------------- */

  var PER_PAGE = 50;

  function gameRow(row, bots) {
    // [key, round, table, rotation, seat, [bots], [places], [scores], forfeit bits,
    //  rating, change, rank, rank change, incidents or 0]
    var tr = document.createElement("tr"), seat = row[4];
    var td = function (child, className) {
      var cell = el("td", className);
      if (child !== undefined) cell.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
      tr.appendChild(cell);
      return cell;
    };
    var link = el("a", null, row[0]);
    link.href = ROOT + "games/" + row[0] + ".html";
    td(link);
    td(String(row[1]));
    td(String(seat));
    var placed = td(place(row[6][seat]));
    if (row[8] & (1 << seat)) { placed.appendChild(document.createTextNode(" ")); placed.appendChild(el("span", "tag bad", "forfeit")); }
    td(String(row[7][seat]));
    var rating = td(row[9].toFixed(2) + " ", "num");
    rating.appendChild(trend(row[10] > 0.005 ? 1 : row[10] < -0.005 ? -1 : 0, signed(row[10])));
    var rank = td(row[11] + " ", "num");
    rank.appendChild(trend(row[12], rankChange(row[12])));
    var table = td();
    row[5].forEach(function (number, other) {
      if (other === seat) return;
      var mate = el("span", "seatres");
      mate.appendChild(place(row[6][other]));
      mate.appendChild(document.createTextNode(" "));
      var bot = bots[number];
      var a = el("a", null, bot[0]);
      a.href = ROOT + "bots/" + bot[1] + ".html";
      mate.appendChild(a);
      table.appendChild(mate);
    });
    (row[13] || []).forEach(function (incident) {
      table.appendChild(el("span", "tag bad", bots[row[5][incident[0]]][0] + ": " + incident[1]));
    });
    return tr;
  }

  function label(text, input) {
    var wrap = el("label", null, text + " ");
    wrap.appendChild(input);
    return wrap;
  }

  /* A bot's games in `box`, newest first, with a round and a table-mate filter and pages.
     `state` holds the filters and page; `changed(state)` is told of each change. With
     `roundElsewhere` the page has its own round box (the game list's), so this has none. */
  function gameList(box, title, rows, bots, state, changed, roundElsewhere) {
    box.textContent = "";
    var id = box.id || "list";
    var form = el("form", "filters");
    form.setAttribute("role", "search");
    form.setAttribute("aria-label", "filter " + title);
    var round = el("input");
    round.type = "number"; round.min = "1"; round.inputMode = "numeric"; round.id = id + "-round";
    round.value = state.round || "";
    var mate = el("input");
    mate.type = "search"; mate.id = id + "-with"; mate.value = state["with"] || "";
    mate.setAttribute("autocomplete", "off");
    if (!roundElsewhere) form.appendChild(label("round", round));
    form.appendChild(label("table-mate", mate));
    var clear = el("button", null, "clear");
    clear.type = "button";
    form.appendChild(clear);
    box.appendChild(form);
    var count = el("p", "found");
    count.setAttribute("aria-live", "polite");
    box.appendChild(count);
    var pager = el("nav", "pager");
    pager.setAttribute("aria-label", "pages of " + title);
    box.appendChild(pager);
    var scroll = el("div", "scroll");
    var table = el("table", "compact games");
    var head = table.createTHead().insertRow();
    ["game", "round", "seat", "place", "score", "rating", "rank", "table"].forEach(function (name) {
      head.appendChild(el("th", null, name));
    });
    var body = table.createTBody();
    scroll.appendChild(table);
    box.appendChild(scroll);
    var newest = rows.slice().reverse();

    function draw() {
      var wanted = parseInt(state.round, 10), text = (state["with"] || "").trim().toLowerCase();
      var shown = newest.filter(function (row) {
        if (wanted && row[1] !== wanted) return false;
        if (!text) return true;
        return row[5].some(function (number, other) {
          return other !== row[4] && bots[number][0].toLowerCase().indexOf(text) >= 0;
        });
      });
      var pages = Math.max(1, Math.ceil(shown.length / PER_PAGE));
      var page = Math.min(Math.max(parseInt(state.page, 10) || 1, 1), pages);
      state.page = page > 1 ? String(page) : "";
      body.textContent = "";
      shown.slice((page - 1) * PER_PAGE, page * PER_PAGE).forEach(function (row) { body.appendChild(gameRow(row, bots)); });
      if (!shown.length) {
        var none = body.insertRow().insertCell();
        none.colSpan = 8; none.className = "muted";
        none.textContent = rows.length ? "No game matches these filters." : "No game yet.";
      }
      count.textContent = (shown.length === rows.length ? rows.length + " games" : shown.length + " of " + rows.length + " games") +
        (pages > 1 ? ", " + PER_PAGE + " to a page" : "");
      drawPager(pager, page, pages, function (to) { state.page = String(to); draw(); changed(state); scroll.scrollIntoView({block: "nearest"}); });
    }
    var typed = function () {
      if (!roundElsewhere) state.round = round.value;
      state["with"] = mate.value;
      state.page = "";
      draw();
      changed(state);
    };
    round.addEventListener("input", typed);
    mate.addEventListener("input", typed);
    form.addEventListener("submit", function (event) { event.preventDefault(); typed(); });
    clear.addEventListener("click", function () { round.value = ""; mate.value = ""; typed(); });
    draw();
  }

  /* first, previous, page N of M, next, last, and a box to jump to any page */
  function drawPager(pager, page, pages, go) {
    pager.textContent = "";
    if (pages <= 1) { pager.hidden = true; return; }
    pager.hidden = false;
    var button = function (text, to, name) {
      var b = el("button", null, text);
      b.type = "button";
      b.disabled = to === page || to < 1 || to > pages;
      if (name) b.setAttribute("aria-label", name);
      b.addEventListener("click", function () { go(to); });
      pager.appendChild(b);
    };
    button("\u00ab first", 1, "first page");
    button("\u2039 previous", page - 1, "previous page");
    pager.appendChild(el("span", null, "page " + page + " of " + pages));
    button("next \u203a", page + 1, "next page");
    button("last \u00bb", pages, "last page");
    var jump = el("input");
    jump.type = "number"; jump.min = "1"; jump.max = String(pages); jump.inputMode = "numeric";
    jump.className = "jump";
    jump.setAttribute("aria-label", "go to page");
    jump.placeholder = "page";
    jump.addEventListener("keydown", function (event) {
      if (event.key === "Enter") {
        event.preventDefault();
        var to = parseInt(jump.value, 10);
        if (to >= 1 && to <= pages) go(to);
      }
    });
    pager.appendChild(jump);
  }

  /* --- a bot's page: every game ----------------------------------------------------------- */

  var chartRows = function () {};  // the rating chart's readout takes the bot's rows (below)
  var botGames = document.getElementById("bot-games");
  if (botGames) {
    var slug = botGames.getAttribute("data-slug"), botName = botGames.getAttribute("data-bot");
    load("site", "data/site.js", function (site) {
      var bot = site.bots.filter(function (b) { return b[1] === slug; })[0] || [botName, slug, 0];
      loadRows(site, bot, function (rows) {
        var state = readAddress();
        chartRows(rows);
        gameList(botGames, "the games of " + botName, rows, site.bots, state, setAddress);
        var note = document.getElementById("games-static-note");
        if (note) note.hidden = true;
        if (state.round || state["with"] || state.page) botGames.scrollIntoView();
      }, function () {});
    }, function () {});
  }

  /* --- a bot's rating chart: a readout of the point nearest the pointer --------------- */

  var chart = document.getElementById("rating-chart");
  if (chart) {
    var area = chart.querySelector(".area"), dots = chart.querySelectorAll("a.pt");
    var rowOf = null;  // game key -> the bot's row of that game (its data script)
    chartRows = function (rows) {
      rowOf = {};
      rows.forEach(function (row, i) { rowOf[row[0]] = [i + 1, row]; });
    };
    if (botGames && data("bot:" + botGames.getAttribute("data-slug"))) chartRows(data("bot:" + botGames.getAttribute("data-slug")));
    var readout = document.getElementById("chart-readout"), cursor = chart.querySelector(".cursor");
    var xs = Array.prototype.map.call(dots, function (dot) { return parseFloat(dot.style.left); });
    var chosen = -1, pointer = "mouse";
    var choose = function (i) {
      if (i < 0 || i >= dots.length || i === chosen) return;
      if (chosen >= 0) dots[chosen].classList.remove("on");
      chosen = i;
      dots[i].classList.add("on");
      cursor.hidden = false;
      cursor.style.left = xs[i] + "%";
      var key = dots[i].getAttribute("href").replace(/^.*\/|\.html$/g, "");
      var a = el("a", null, key);
      a.href = dots[i].getAttribute("href");
      var found = rowOf && rowOf[key];
      if (!found) { readout.textContent = "Game "; readout.appendChild(a); return; }
      var n = found[0], p = found[1], seat = p[4];
      readout.textContent = "After game " + n + ", ";
      readout.appendChild(a);
      readout.appendChild(document.createTextNode(" (round " + p[1] + ", place " + p[6][seat] + " of " + p[6].length + "): rating " + p[9].toFixed(2) + " ("));
      readout.appendChild(trend(p[10] > 0.005 ? 1 : p[10] < -0.005 ? -1 : 0, signed(p[10])));
      readout.appendChild(document.createTextNode("), rank " + p[11] + " ("));
      readout.appendChild(trend(p[12], p[12] ? rankChange(p[12]) : "unchanged"));
      readout.appendChild(document.createTextNode("), mu " + p[14].toFixed(2) + ", sigma " + p[15].toFixed(2)));
    };
    var nearest = function (event) {
      var box = area.getBoundingClientRect();
      var at = 100 * (event.clientX - box.left) / box.width, best = 0;
      for (var i = 1; i < xs.length; i++) if (Math.abs(xs[i] - at) < Math.abs(xs[best] - at)) best = i;
      return best;
    };
    var again = false;  // this tap chose the point already chosen
    area.addEventListener("pointerdown", function (event) {
      pointer = event.pointerType;
      var before = chosen;
      choose(nearest(event));
      again = before === chosen;
    });
    area.addEventListener("pointermove", function (event) { if (event.pointerType === "mouse") choose(nearest(event)); });
    // A click opens the game of the chosen point (a mouse on a point follows its own link).
    // On a touch screen the points are close together: a first tap reads the nearest out,
    // a second tap on it opens its game.
    area.addEventListener("click", function (event) {
      var onPoint = event.target.classList.contains("pt");
      if (pointer === "mouse" && onPoint) return;
      event.preventDefault();
      if (chosen >= 0 && (pointer === "mouse" || again)) location.href = dots[chosen].href;
    });
    area.addEventListener("keydown", function (event) {
      var to = {ArrowLeft: chosen - 1, ArrowRight: chosen + 1, Home: 0, End: dots.length - 1}[event.key];
      if (chosen < 0 && (event.key === "ArrowLeft" || event.key === "ArrowRight")) to = dots.length - 1;
      if (to !== undefined) { event.preventDefault(); choose(Math.max(0, Math.min(dots.length - 1, to))); }
      else if (event.key === "Enter" && chosen >= 0) location.href = dots[chosen].href;
    });
  }

  /* --- the game list: filter by bot and round, jump to a page ------------------------------ */

  var filters = document.getElementById("games-filter");
  if (filters) {
    var current = parseInt(filters.getAttribute("data-page"), 10);
    var listed = document.getElementById("games-pages");
    var filtered = document.getElementById("games-filtered");
    var note = document.getElementById("games-note");
    var botInput = document.getElementById("filter-bot"), roundInput = document.getElementById("filter-round");
    var jump = document.getElementById("page-jump");
    if (jump) {
      jump.hidden = false;
      jump.addEventListener("submit", function (event) {
        event.preventDefault();
        var to = parseInt(document.getElementById("page-number").value, 10);
        var pages = parseInt(jump.getAttribute("data-pages"), 10);
        if (to >= 1 && to <= pages) location.href = "page-" + to + ".html";
      });
    }
    load("site", "data/site.js", function (site) {
      var names = document.getElementById("bot-names");
      site.bots.forEach(function (bot) { var option = el("option"); option.value = bot[0]; names.appendChild(option); });
      filters.hidden = false;
      var findBot = function (text) {
        var exact = site.bots.filter(function (bot) { return bot[0] === text; });
        if (exact.length) return exact[0];
        var lower = text.toLowerCase();
        var near = site.bots.filter(function (bot) { return bot[0].toLowerCase() === lower; });
        if (!near.length) near = site.bots.filter(function (bot) { return bot[0].toLowerCase().indexOf(lower) >= 0; });
        return near.length === 1 ? near[0] : null;
      };
      var showRows = function (round) {
        forEach(listed.querySelectorAll("table.games tbody tr[data-round]"), function (row) {
          row.hidden = !!round && row.getAttribute("data-round") !== String(round);
        });
      };
      var apply = function () {
        var state = readAddress();
        botInput.value = state.bot || "";
        roundInput.value = state.round || "";
        note.textContent = "";
        if (state.bot) {
          var bot = findBot(state.bot);
          if (!bot) {
            note.textContent = "No bot is named \u201c" + state.bot + "\u201d" + " (or more than one name holds it): pick one from the list.";
            listed.hidden = false; filtered.hidden = true; showRows(null);
            return;
          }
          loadRows(site, bot, function (rows) {
            listed.hidden = true; filtered.hidden = false;
            var state2 = {bot: bot[0], round: state.round, "with": state["with"], page: state.page};
            gameList(filtered, "the games of " + bot[0], rows, site.bots, state2, function (now) {
              setAddress({bot: bot[0], round: now.round, "with": now["with"], page: now.page});
            }, true);
            var heading = el("h2", null, "Games of ");
            var a = el("a", null, bot[0]);
            a.href = ROOT + "bots/" + bot[1] + ".html";
            heading.appendChild(a);
            filtered.insertBefore(heading, filtered.firstChild);
          }, function () { note.textContent = "The games of " + bot[0] + " could not be loaded (render the site again)."; });
          return;
        }
        listed.hidden = false; filtered.hidden = true;
        // A round is shown with its own page links (in the note): the list's pager and
        // page box, which page through every round, are hidden while it is.
        forEach(listed.querySelectorAll("nav.pager, #page-jump"), function (node) { node.hidden = !!state.round; });
        if (state.round) {
          var wanted = parseInt(state.round, 10);
          // The rounds' pages are in data/rounds/<n>.js, site.rounds_per_script rounds each.
          var script = Math.max(1, Math.floor((wanted - 1) / site.rounds_per_script) + 1);
          var missing = function () { note.textContent = "No game of round " + state.round + " has been played."; showRows(null); };
          if (!(script <= site.round_scripts)) { missing(); return; }
          load("rounds/" + script, "data/rounds/" + script + ".js", function (rounds) {
            showRound(state, wanted, rounds.filter(function (r) { return r[0] === wanted; })[0], missing);
          }, missing);
        } else {
          showRows(null);
        }
      };
      var showRound = function (state, wanted, span, missing) {
        if (readAddress().round !== state.round) return;  // the reader asked for another since
        if (!span) { missing(); return; }
        if (current < span[1] || current > span[2]) { location.replace("page-" + span[1] + ".html#round=" + wanted); return; }
        showRows(wanted);
        note.textContent = "Round " + wanted + ": " + span[3] + " games" +
          (span[1] === span[2] ? ", all on this page." : ", on pages " + span[1] + " to " + span[2] + ".");
        if (span[2] > span[1]) {
          [["\u2039 its previous page", current - 1], ["its next page \u203a", current + 1]].forEach(function (pair) {
            if (pair[1] < span[1] || pair[1] > span[2]) return;
            note.appendChild(document.createTextNode(" "));
            var more = el("a", null, pair[0]);
            more.href = "page-" + pair[1] + ".html#round=" + wanted;
            note.appendChild(more);
          });
        }
      };
      filters.addEventListener("submit", function (event) {
        event.preventDefault();
        location.hash = address({bot: botInput.value.trim(), round: roundInput.value.trim()}).slice(1);
        if (!location.hash) apply();
      });
      document.getElementById("filter-clear").addEventListener("click", function () {
        botInput.value = ""; roundInput.value = "";
        history.replaceState(null, "", location.pathname + location.search);
        apply();
      });
      window.addEventListener("hashchange", apply);
      apply();
    }, function () {});
  }
})();
