/* The human seat's page: one seat at a table of arena play. It shows exactly what the
   server sends for this seat (its observation, its legal actions, the events it saw) and
   sends back one of the legal actions. The table is drawn by the game's replay viewer
   script (engine/<game>/replay.js, loaded as assets/replay-<game>.js), the moves are
   offered by assets/play-<game>.js. The seat's token is in the URL's fragment (#t=...),
   which no request carries; it goes to the server only inside the WebSocket.
   Everything from the server is put in the page with textContent, never as markup. */
(function () {
  "use strict";
  var token = (/(?:^#|&)t=([A-Za-z0-9_-]+)/.exec(location.hash) || [])[1] || "";
  var $ = function (id) { return document.getElementById(id); };
  var statusLine = $("status"), messageBox = $("message"), actionsBox = $("actions"), tableBox = $("table");
  var logList = $("log"), resultBox = $("result"), resultBody = $("result-body"), title = $("title");
  var intro = null, viewer = null, controls = null, cards = {}, rounds = [], socket = null;
  var current = null; // the last turn or update
  var pendingTurn = null; // the turn waiting for this seat's answer
  var over = null, closed = false, retry = 0;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function say(text) { messageBox.textContent = text || ""; }

  /* --- the kit the game's viewer draws with (the replay viewer's, for one seat) ------- */
  function cardName(id) {
    var face = cards[String(id)];
    return face && viewer ? viewer.faceName(face) : "card";
  }
  function named(node, name) { node.setAttribute("role", "img"); node.setAttribute("aria-label", name); return node; }
  function card(id, extra) {
    if (id === -1) return named(el("span", "pcard back", ""), "face-down card");
    if (id === null || id === undefined) return named(el("span", "pcard gone", ""), "no card");
    var face = cards[String(id)];
    if (!face) return named(el("span", "pcard back", ""), "face-down card");
    var node = viewer.cardNode(face, id);
    if (extra) node.className += " " + extra;
    node.setAttribute("data-card", String(id));
    return named(node, node.title || cardName(id));
  }
  function hidden(node) { node.setAttribute("aria-hidden", "true"); return node; }
  function cardRow(list, limit, extraFor) {
    var row = el("div", "cardrow");
    if (typeof list === "number") {
      for (var i = 0; i < Math.min(list, 14); i++) row.appendChild(hidden(card(-1)));
      row.appendChild(el("span", "count", list + (list === 1 ? " card" : " cards")));
      return row;
    }
    if (!list || !list.length) { row.appendChild(el("span", "count", "—")); return row; }
    var shown = limit && list.length > limit ? list.slice(list.length - limit) : list;
    if (shown.length < list.length) row.appendChild(el("span", "count", "+" + (list.length - shown.length) + " … "));
    shown.forEach(function (id) { row.appendChild(card(id, extraFor ? extraFor(id) : null)); });
    return row;
  }
  function pile(count) {
    var row = el("div", "cardrow");
    row.appendChild(hidden(card(count ? -1 : null)));
    row.appendChild(el("span", "count", count + (count === 1 ? " card" : " cards")));
    return row;
  }
  function zone(parent, name, content) {
    var box = el("div", "zone");
    box.setAttribute("data-zone", name);
    box.appendChild(el("div", "zname", name));
    box.appendChild(content);
    parent.appendChild(box);
    return box;
  }
  function labelledPile(label, content) {
    var box = el("div", "pile");
    box.appendChild(el("div", "label", label));
    box.appendChild(content);
    return box;
  }
  function seatName(seat) {
    return "seat " + seat + " · " + intro.seats[seat];
  }
  function cardsText(list) { return (list || []).map(cardName).join(" "); }
  // A card object of an observation or event becomes its id (what the viewer draws).
  function ids(value) {
    if (Array.isArray(value)) return value.map(ids);
    if (value && typeof value === "object") {
      if (typeof value.id === "number" && !("type" in value) && cards[String(value.id)]) return value.id;
      var out = {};
      for (var key in value) out[key] = ids(value[key]);
      return out;
    }
    return value;
  }

  /* --- loading the game's scripts -------------------------------------------------- */
  function load(src, done) {
    var script = document.createElement("script");
    script.src = src;
    script.onload = done;
    script.onerror = function () { say("Could not load " + src + ": reload the page."); };
    document.head.appendChild(script);
  }
  function start(hello) {
    intro = hello;
    title.textContent = hello.title + " · you are seat " + hello.seat;
    document.title = hello.title + " · arena play";
    if (viewer) return;
    if (!/^[a-z0-9-]+$/.test(String(hello.game))) { say("Unknown game."); return; }
    load("assets/replay-" + hello.game + ".js", function () {
      load("assets/play-" + hello.game + ".js", function () {
        var kit = {
          data: { seats: hello.seats, cards: cards, players: hello.players }, players: hello.players, steps: rounds,
          el: el, card: card, cardName: cardName, cardsText: cardsText, cardRow: cardRow, pile: pile, zone: zone,
          labelledPile: labelledPile, seatName: seatName
        };
        viewer = window.ARENA_VIEWERS[hello.game](kit);
        kit.viewer = viewer;
        kit.ids = ids;
        kit.send = act;
        kit.seat = hello.seat;
        controls = window.ARENA_PLAY[hello.game](kit);
        flush();
      });
    });
  }

  /* --- messages from the server ---------------------------------------------------- */
  var queue = [];
  function flush() { while (queue.length && viewer) handle(queue.shift()); }
  function receive(message) {
    if (message.type === "hello") { start(message); return; }
    queue.push(message);
    flush();
  }
  function handle(message) {
    switch (message.type) {
      case "new_game":
        logList.textContent = ""; rounds.length = 0; over = null; pendingTurn = null; asked = false; noticeText = "";
        lastReplay = null;
        resultBox.hidden = true; say("");
        note("A new deal: game " + message.game_number + ".");
        break;
      case "update": case "turn":
        merge(message.cards);
        if (message.replace) { logList.textContent = ""; rounds.length = 0; }
        (message.events || []).forEach(logEvent);
        current = message;
        pendingTurn = message.type === "turn" ? message : null;
        if (pendingTurn && message.time_s) pendingTurn.deadline = Date.now() + message.time_s * 1000;
        if (message.type === "turn") say("");
        draw();
        break;
      case "timeout":
        pendingTurn = null;
        say("Your time for this move ran out: the rest of this game is played for you (a forfeit).");
        draw();
        break;
      case "over":
        merge(message.cards);
        (message.events || []).forEach(logEvent);
        over = message; pendingTurn = null;
        draw();
        showResult();
        break;
      case "notice":
        if (message.stored) lastStored = message.stored;
        if (message.stored) lastReplay = message.replay || null;
        if (message.asked) asked = message.asked.indexOf(intro.seat) >= 0;
        noticeText = message.text || "";
        if (message.closed) { closed = true; statusLine.textContent = message.text; }
        else if (over) showResult();
        else statusLine.textContent = message.text;
        break;
      case "error":
        say(message.message);
        if (message.fatal) { closed = true; statusLine.textContent = "Not connected."; }
        break;
    }
  }
  var lastStored = null, lastReplay = null, noticeText = "", asked = false;
  function merge(more) { for (var id in more || {}) cards[id] = more[id]; }
  function note(text) { logList.appendChild(el("li", "muted", text)); }
  function logEvent(raw) {
    var event = ids(raw);
    if (event.type === "round_end") rounds.push([event.seat, {}, [event]]);
    var who = "seat" in event && event.seat !== null && event.seat !== undefined ? seatName(event.seat) + " " : "";
    var text = controls.describe(event, who);
    if (!text) return;
    var item = el("li", event.seat === intro.seat ? "mine" : null, text);
    logList.appendChild(item);
    var box = logList.parentNode;
    box.scrollTop = box.scrollHeight;
  }

  /* --- drawing --------------------------------------------------------------------- */
  function draw() {
    if (!current || !viewer) return;
    tableBox.textContent = "";
    if (current.table) viewer.draw(current.table, intro.seat, tableBox, rounds.length);
    actionsBox.textContent = "";
    var obs = current.observation;
    if (pendingTurn) actionsBox.setAttribute("data-request", String(pendingTurn.request));
    else actionsBox.removeAttribute("data-request");
    if (pendingTurn) {
      statusLine.textContent = "Your move." + (intro.time_s ? " You have " + intro.time_s + " s for each move." : "");
      controls.draw(pendingTurn, actionsBox);
      if (pendingTurn.deadline) {
        // The time left, in a line of its own (not read out every second).
        var clock = el("p", "hint");
        clock.id = "clock";
        actionsBox.appendChild(clock);
        tick();
      }
    } else if (over) {
      statusLine.textContent = "The game is over.";
      actionsBox.appendChild(el("p", "muted", "The game is over: see the result."));
    } else {
      var who = obs.current_player;
      var text = who === null || who === undefined ? "Waiting…" : "Waiting for " + seatName(who) + "…";
      statusLine.textContent = text;
      actionsBox.appendChild(el("p", "muted", text));
    }
  }
  function tick() {
    var clock = $("clock");
    if (!clock || !pendingTurn || !pendingTurn.deadline) return;
    var left = Math.max(0, Math.ceil((pendingTurn.deadline - Date.now()) / 1000));
    clock.textContent = left + " s left for this move (then the move is made for you and the game counts as a forfeit).";
  }
  setInterval(tick, 1000);
  function showResult() {
    resultBody.textContent = "";
    var table = el("table", "compact");
    var head = el("tr");
    ["seat", "player", "place", "score"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    var thead = el("thead"); thead.appendChild(head); table.appendChild(thead);
    var body = el("tbody");
    for (var s = 0; s < intro.players; s++) {
      var row = el("tr", s === intro.seat ? "mine" : null);
      row.appendChild(el("td", null, s));
      row.appendChild(el("td", null, intro.seats[s] + (s === intro.seat ? " (you)" : "") +
        (over.forfeits.indexOf(s) >= 0 ? " · forfeit" : "")));
      row.appendChild(el("td", null, over.places[s]));
      row.appendChild(el("td", null, over.scores[s]));
      body.appendChild(row);
    }
    table.appendChild(body);
    table.id = "result-table";
    resultBody.appendChild(el("p", null, "You finished in place " + over.places[intro.seat] + " of " + intro.players + "."));
    resultBody.appendChild(table);
    if (noticeText) {
      var told = el("p", "muted", noticeText);
      told.id = "notice";
      resultBody.appendChild(told);
    }
    if (lastReplay && /^games\/[0-9-]+\.html$/.test(lastReplay)) {
      var link = el("a", null, "Watch this game's replay (every seat's cards, step by step)");
      link.href = "../" + lastReplay;
      link.id = "replay-link";
      resultBody.appendChild(el("p")).appendChild(link);
    }
    if (!closed) {
      var again = el("button", "primary", asked ? "Asked for a new deal" : "Play again (a new deal)");
      again.type = "button";
      again.id = "again";
      again.disabled = asked;
      again.addEventListener("click", function () {
        again.disabled = true;
        asked = true;
        send({ type: "again" });
      });
      resultBody.appendChild(again);
    }
    var wasHidden = resultBox.hidden;
    resultBox.hidden = false;
    statusLine.textContent = "The game is over: you are " + ordinal(over.places[intro.seat]) + ".";
    if (wasHidden && $("again")) $("again").focus();
  }
  function ordinal(n) { return n + (n === 1 ? "st" : n === 2 ? "nd" : n === 3 ? "rd" : "th"); }

  /* --- to the server ----------------------------------------------------------------- */
  function send(message) {
    if (socket && socket.readyState === 1) socket.send(JSON.stringify(message));
    else say("Not connected: reconnecting…");
  }
  function act(action) {
    if (!pendingTurn) { say("It is not your move."); return; }
    send({ type: "act", request: pendingTurn.request, action: action });
  }
  /* --- on the submission server: a signed-in author (its token in this tab's
     sessionStorage, from the authors' page /door/) opens a table against a ladder bot. */
  function chooser() {
    var signedIn = sessionStorage.getItem("arena-token");
    if (!signedIn) {
      statusLine.textContent = "This page needs its seat link (the one arena play printed). On a submission " +
        "server, sign in on the authors' page (/door/) first, then come back here to play a ladder bot.";
      return;
    }
    var auth = { Authorization: "Bearer " + signedIn };
    statusLine.textContent = "Choose a ladder bot to play.";
    fetch("bots", { headers: auth }).then(function (answer) { return answer.json(); }).then(function (body) {
      actionsBox.textContent = "";
      var label = el("label", null, "Bot ");
      var pick = el("select");
      pick.id = "ladder-bot";
      (body.bots || []).forEach(function (bot, n) {
        pick.appendChild(new Option(bot.bot + " " + bot.version + " · " + bot.game, String(n)));
      });
      label.appendChild(pick);
      var row = el("div", "actions-row");
      row.appendChild(label);
      var go = el("button", "primary", "Play it");
      go.type = "button";
      go.id = "open-table";
      go.addEventListener("click", function () {
        var bot = body.bots[Number(pick.value)];
        if (!bot) return;
        go.disabled = true;
        fetch("tables", {
          method: "POST", headers: Object.assign({ "Content-Type": "application/json" }, auth),
          body: JSON.stringify({ bot: bot.bot, game: bot.game })
        }).then(function (answer) { return answer.json(); }).then(function (made) {
          var found = /#t=([A-Za-z0-9_-]+)$/.exec(made.url || "");
          if (!found) { say(made.detail || "The table could not be opened."); go.disabled = false; return; }
          token = found[1];
          location.hash = "t=" + token;
          actionsBox.textContent = "";
          connect();
        });
      });
      row.appendChild(go);
      actionsBox.appendChild(row);
      if (!(body.bots || []).length) say(body.detail || "No ladder bot to play yet.");
    });
  }
  function connect() {
    if (!token) { chooser(); return; }
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var path = location.pathname.replace(/\/[^/]*$/, "/") + "ws";
    socket = new WebSocket(scheme + location.host + path);
    socket.onopen = function () { retry = 0; socket.send(JSON.stringify({ type: "join", token: token })); };
    socket.onmessage = function (event) {
      var message;
      try { message = JSON.parse(event.data); } catch (ignored) { return; }
      receive(message);
    };
    socket.onclose = function () {
      if (closed) return;
      statusLine.textContent = "Connection lost: reconnecting…";
      retry = Math.min(retry + 1, 6);
      setTimeout(connect, 300 * retry);
    };
  }
  window.ARENA_PLAY = window.ARENA_PLAY || {};
  connect();
})();
