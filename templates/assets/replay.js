/* arena replay viewer. The game page loads replays/<key>.r4.js, which registers the data
   in window.ARENA_REPLAYS: the small facts as they are, the bulk (steps, frames, ...)
   zlib-compressed and base64 in `z`, which this script inflates (DecompressionStream, no
   fetch: it works from file://). Then it loads the game's own drawing script beside it,
   assets/replay-<game>.js (engine/<game>/replay.js, which registers itself in
   window.ARENA_VIEWERS), and draws the replay with it. Data shape: arena/site/replay.py.
   Everything from the data is put in the page with textContent, never as markup.
   Keys: left/right arrows step, Home/End go to the deal/the end, space plays or pauses
   (also when a control of the viewer has the focus, except where the key is its own);
   the step list is one tab stop whose up/down arrows step. The step is in the URL
   (#step=N, &view=S for a seat's view), so a link opens the game at that moment. */
(function () {
  "use strict";
  var root = document.getElementById("replay");
  if (!root) return;
  var key = root.getAttribute("data-key");
  var stored = (window.ARENA_REPLAYS || {})[key];
  if (!stored) return; // the page keeps its "not rendered" message
  var here = document.currentScript ? document.currentScript.src : "";
  if (stored.error) {
    root.textContent = "";
    note(root, "This game cannot be replayed: " + stored.error);
    return;
  }
  var data, players, steps, frames, cards, last;
  var CHECK = 64; // keep a full copy of every 64th frame so a jump is fast
  var checkpoints = {};
  unpack(stored).then(begin, function (error) {
    root.textContent = "";
    note(root, "This replay cannot be read: " + (error && error.message ? error.message : error));
  });

  /* --- the stored data: `z` inflated back into the data (arena/site/replay.py, pack) -- */
  function unpack(packed) {
    if (!("z" in packed)) return Promise.resolve(packed);
    if (typeof DecompressionStream === "undefined" || typeof Blob === "undefined" || !Blob.prototype.stream) {
      return Promise.reject(new Error("this browser cannot unpack it (it needs DecompressionStream: " +
        "Chrome 80, Firefox 113, Safari 16.4 or later)."));
    }
    var text = atob(packed.z), bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).text().then(function (json) {
      var bulk = JSON.parse(json), out = {}, name;
      for (name in packed) if (name !== "z") out[name] = packed[name];
      for (name in bulk) out[name] = bulk[name];
      return out;
    });
  }
  function begin(full) {
    data = full;
    players = data.players; steps = data.steps; frames = data.frames; cards = data.cards;
    last = frames.length - 1;
    decisions = data.decisions || null;
    legal = data.legal || null;
    actions = data.actions || [];
    (data.faults || []).forEach(function (fault) { (faults[fault[0]] = faults[fault[0]] || []).push(fault); });
    root.textContent = "";
    if (!/^[a-z0-9-]+$/.test(String(data.game))) {
      note(root, "No replay viewer for this game.");
      return;
    }
    var script = document.createElement("script");
    script.src = here.slice(0, here.lastIndexOf("/") + 1) + "replay-" + data.game + ".js";
    script.onload = function () {
      var make = (window.ARENA_VIEWERS || {})[data.game];
      if (make) start(make);
      else note(root, "No replay viewer for " + data.game + ".");
    };
    script.onerror = function () { note(root, "No replay viewer for " + data.game + "."); };
    document.head.appendChild(script);
  }

  /* --- frames: the same patch and mask rules as arena/site/replay.py ------------------ */
  function patch(old, change) {
    var out = {}, zone;
    for (zone in old) out[zone] = old[zone];
    for (zone in change) {
      var value = change[zone];
      if (value && typeof value === "object" && !Array.isArray(value) && "k" in value && "t" in value && Object.keys(value).length === 2) {
        out[zone] = old[zone].slice(0, value.k).concat(value.t);
      } else if (value && typeof value === "object" && !Array.isArray(value) && "x" in value && Object.keys(value).length === 1) {
        delete out[zone];
      } else {
        out[zone] = value;
      }
    }
    return out;
  }
  function stateAt(index) {
    var base = Math.floor(index / CHECK) * CHECK, state, i, s;
    if (checkpoints[base]) {
      state = checkpoints[base];
    } else {
      var from = 0;
      for (var b = base - CHECK; b >= 0; b -= CHECK) { if (checkpoints[b]) { from = b; break; } }
      state = checkpoints[from] || null;
      if (!state) {
        state = { full: {}, seats: [] };
        for (s = 0; s < players; s++) state.seats.push({});
        state = apply(state, frames[0]);
        checkpoints[0] = state;
      }
      for (i = from + 1; i <= base; i++) {
        state = apply(state, frames[i]);
        if (i % CHECK === 0) checkpoints[i] = state;
      }
    }
    for (i = base + 1; i <= index; i++) state = apply(state, frames[i]);
    return state;
  }
  function apply(state, frame) {
    var next = { full: patch(state.full, frame[0]), seats: [] };
    for (var s = 0; s < players; s++) next.seats.push(patch(state.seats[s], frame[s + 1]));
    return next;
  }
  function mask(full, seat) {
    var out = {}, zone;
    for (zone in full) {
      var value = full[zone];
      if (/^h\d+$/.test(zone) && Number(zone.slice(1)) !== seat && Array.isArray(value)) value = value.length;
      out[zone] = value;
    }
    if ("down" in full) out.down = full.down.map(function (slots) { return slots.map(function (c) { return c === null ? null : -1; }); });
    if ("setup" in full) out.setup = full.setup === null ? null : full.setup[seat];
    return out;
  }
  function tableAt(index, seat) {
    var state = stateAt(index);
    if (seat === null) return state.full;
    var out = mask(state.full, seat), exceptions = state.seats[seat];
    for (var zone in exceptions) out[zone] = exceptions[zone];
    return out;
  }

  /* --- drawing helpers, shared with the game's script (as `kit`) ----------------------- */
  var viewer = null; // the game's drawing functions, from its script (see start)
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function note(parent, text) { parent.appendChild(el("p", "muted", text)); }
  function cardName(id) {
    var face = cards[String(id)];
    if (!face) return "#" + id;
    return viewer.faceName(face);
  }
  function named(node, name) {
    // A card is one picture with a name (its rank and suit as text), not loose letters.
    node.setAttribute("role", "img");
    node.setAttribute("aria-label", name);
    return node;
  }
  function card(id, extra) {
    if (id === -1) return named(el("span", "pcard back", ""), "face-down card");
    if (id === null) return named(el("span", "pcard gone", ""), "no card");
    var face = cards[String(id)];
    if (!face) return named(el("span", "pcard", "?"), "unknown card");
    var node = viewer.cardNode(face, id);
    if (extra) node.className += " " + extra;
    node.setAttribute("data-card", String(id));
    return named(node, node.title || cardName(id));
  }
  function hidden(node) { node.setAttribute("aria-hidden", "true"); return node; }
  function cardRow(list, limit, extraFor) {
    var row = el("div", "cardrow");
    if (typeof list === "number") {
      for (var i = 0; i < Math.min(list, 14); i++) row.appendChild(hidden(card(-1))); // the count says it
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
  function seatName(seat) { return "seat " + seat + " · " + data.seats[seat]; }
  function cardsText(list) { return (list || []).map(cardName).join(" "); }

  /* --- what happened (the words are the game's) ---------------------------------------- */
  function actionText(action) { return viewer.actionText(action) || JSON.stringify(action); }
  function eventText(event) {
    var who = "seat" in event && event.seat !== null ? seatName(event.seat) + " " : "";
    return viewer.eventText(event, who);
  }
  function describe(index) {
    if (index === 0) return "The deal. Step forward to see the first decision.";
    var step = steps[index - 1];
    var text = seatName(step[0]) + " " + actionText(step[1]) + (step[3] === "fallback" ? " (fallback player: the bot had forfeited)" : "");
    var extra = (step[2] || []).map(eventText).filter(function (t) { return t; });
    return text + (extra.length ? " — " + extra.join("; ") : "");
  }

  /* --- the acting bot's decision: think time, choices, stderr (absent in older games) --- */
  var decisions = null; // per step: [think_s, legal, stderr lines] or null (set by begin)
  var legal = null, actions = []; // per step: [chosen, ...legal] numbers into actions
  var faults = {}; // step -> [[step, seat, reason, detail, last stderr lines], ...]
  var FEW_ACTIONS = 8; // a list this short is shown open; a longer one is collapsed until opened
  var actionsOpen = null; // the reader opened or closed the list: kept from step to step
  function seconds(value) {
    if (value < 0.001) return (value * 1000).toFixed(2) + " ms";
    if (value < 1) return (value * 1000).toFixed(value < 0.01 ? 1 : 0) + " ms";
    return value.toFixed(2) + " s";
  }
  function logBox(box, label, lines, id) {
    var pre = el("pre", "log", lines.join("\n"));
    if (id) pre.id = id;
    pre.tabIndex = 0; // a long line scrolls: reachable by keyboard
    pre.setAttribute("role", "region");
    pre.setAttribute("aria-label", label);
    pre.setAttribute("data-focus", id || label);
    box.appendChild(pre);
  }
  function choices(box, index, count, seat, view) {
    var listed = legal ? legal[index - 1] : null;
    if (!listed) return;
    if (view !== null && view !== seat) {
      // Another seat's choices would show its hand: not in this seat's view.
      box.appendChild(el("p", "label", "its legal actions are not shown in " + seatName(view) + "'s view"));
      return;
    }
    var chosen = listed[0], options = listed.slice(1);
    var details = el("details", "choices");
    details.id = "replay-choices";
    var total = count === null || count === undefined ? options.length : count;
    var summary = el("summary", null, "its " + total + (total === 1 ? " legal action" : " legal actions") +
      (options.length < total ? " (the first " + options.length + " listed)" : ""));
    summary.setAttribute("data-focus", "choices");
    details.appendChild(summary);
    var list = el("ol", "choicelist");
    list.start = 0;
    options.forEach(function (number) {
      var item = el("li", number === chosen ? "chosen" : null, actionText(actions[number]));
      if (number === chosen) {
        item.appendChild(el("strong", null, " \u2190 chosen"));
        item.setAttribute("aria-current", "true");
      }
      list.appendChild(item);
    });
    details.appendChild(list);
    details.open = actionsOpen !== null ? actionsOpen : options.length <= FEW_ACTIONS;
    details.addEventListener("toggle", function () { actionsOpen = details.open; });
    box.appendChild(details);
  }
  function decision(box, index, view) {
    box.textContent = "";
    var made = index > 0 && decisions ? decisions[index - 1] : null;
    var here = index > 0 ? faults[index] || [] : [];
    box.hidden = !made && !here.length;
    here.forEach(function (fault) {
      var note = el("p", "fault", seatName(fault[1]) + " forfeited here: " + fault[2] + " (" + fault[3] + "). " +
        "The fallback player chose this action and every later one of this seat; the seat is placed last.");
      note.id = "replay-fault";
      box.appendChild(note);
      if (fault[4] === null) {
        box.appendChild(el("p", "label", "its stderr is its author's: not shown here"));
      } else if (fault[4].length) {
        box.appendChild(el("p", "label", "its last " + (fault[4].length === 1 ? "line" : fault[4].length + " lines") + " on stderr before it"));
        logBox(box, "its last stderr lines before it forfeited", fault[4], "replay-fault-log");
      } else {
        box.appendChild(el("p", "label", "it wrote nothing on stderr before it"));
      }
    });
    if (!made) return;
    var seat = steps[index - 1][0];
    var words = [];
    if (made[0] !== null && made[0] !== undefined) words.push("took " + seconds(made[0]));
    if (made[1] !== null && made[1] !== undefined) words.push("chose among " + made[1] + (made[1] === 1 ? " legal action" : " legal actions"));
    var line = el("p", "facts", seatName(seat) + " " + (words.join(", ") || "decided"));
    line.setAttribute("data-think", made[0] === null || made[0] === undefined ? "" : String(made[0]));
    line.setAttribute("data-legal", made[1] === null || made[1] === undefined ? "" : String(made[1]));
    box.appendChild(line);
    choices(box, index, made[1], seat, view);
    var lines = made[2] || [];
    if (lines.length) {
      box.appendChild(el("p", "label", "its stderr while deciding"));
      logBox(box, "its stderr while deciding", lines, "replay-stderr");
    } else {
      box.appendChild(el("p", "label", "nothing on stderr while deciding"));
    }
  }

  /* --- the downloadable record: enough to re-simulate the game with the engine -------- */
  function record() {
    return {
      game: data.game, rules: data.rules, rules_version: data.rules_version, seed: data.seed,
      seats: data.seats, places: data.places, scores: data.scores, forfeits: data.forfeits,
      actions: steps.map(function (step, n) {
        var entry = { seat: step[0], action: step[1], by: step[3] || "bot" };
        var made = decisions ? decisions[n] : null;
        if (made) { entry.think_s = made[0]; entry.legal = made[1]; entry.stderr = made[2]; }
        return entry;
      })
    };
  }
  function download() {
    var blob = new Blob([JSON.stringify(record(), null, 1)], { type: "application/json" });
    var link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "game-" + key + ".json";
    document.body.appendChild(link);
    link.click();
    document.body.removeChild(link);
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 10000);
  }

  /* --- controls: built once the game's script has loaded ------------------------------ */
  function start(make) {
    viewer = make({
      data: data, players: players, steps: steps, el: el, card: card, cardName: cardName,
      cardsText: cardsText, cardRow: cardRow, pile: pile, zone: zone, labelledPile: labelledPile, seatName: seatName,
      // The official result (a forfeit shares the last place): what the end shows, not the
      // game's own places. A viewer without a stored result (a live seat) leaves it null.
      places: data.places || null, forfeits: data.forfeits || []
    });
    var index = 0, view = null, timer = null;
    // Two rows: the stepping controls (on a phone they stay on screen) and the options.
    var controls = el("div", "controls");
    controls.setAttribute("role", "group");
    controls.setAttribute("aria-label", "replay controls");
    var options = el("div", "options");
    options.setAttribute("role", "group");
    options.setAttribute("aria-label", "replay options");
    function labelled(text, control) {
      var label = el("label", "opt", text + " ");
      label.appendChild(control);
      options.appendChild(label);
    }
    function button(label, title, action, parent) {
      var b = el("button", null, label);
      b.type = "button";
      b.title = title;
      b.setAttribute("aria-label", title);
      b.addEventListener("click", action);
      (parent || controls).appendChild(b);
      return b;
    }
    button("«", "first step (Home)", function () { stop(); go(0); });
    var back = button("◀", "step back (left arrow)", function () { stop(); go(index - 1); });
    back.id = "replay-back";
    var play = button("Play", "play (space)", function () { if (timer) stop(); else run(); });
    play.id = "replay-play";
    play.className = "play";
    var forward = button("▶", "step forward (right arrow)", function () { stop(); go(index + 1); });
    forward.id = "replay-forward";
    button("»", "last step (End)", function () { stop(); go(last); });
    var speed = el("select");
    speed.id = "replay-speed";
    [1, 2, 5, 10, 20].forEach(function (n) { speed.appendChild(new Option(n + (n === 1 ? " step/s" : " steps/s"), String(n))); });
    speed.value = "2";
    speed.addEventListener("change", function () { if (timer) run(); });
    var slider = el("input");
    slider.type = "range"; slider.min = "0"; slider.max = String(last); slider.value = "0";
    slider.id = "replay-slider";
    slider.setAttribute("aria-label", "step");
    slider.addEventListener("input", function () { stop(); go(Number(slider.value)); });
    controls.appendChild(slider);
    var counter = el("span", "stepno");
    controls.appendChild(counter);
    labelled("speed", speed);
    var jump = el("input");
    jump.type = "number"; jump.min = "0"; jump.max = String(last); jump.value = "0"; jump.id = "replay-jump";
    jump.className = "jump";
    jump.addEventListener("change", function () { stop(); go(Number(jump.value)); });
    jump.addEventListener("keydown", function (event) {
      if (event.key !== "Enter") return;
      event.preventDefault();
      stop();
      go(Number(jump.value));
      // The number is taken: the arrows step again (the step list holds the focus).
      ol.focus({ preventScroll: true });
    });
    labelled("go to step", jump);
    var chooser = el("select");
    chooser.id = "replay-view";
    chooser.appendChild(new Option("Full view (everything)", "full"));
    for (var s = 0; s < players; s++) chooser.appendChild(new Option("As " + seatName(s) + " saw it", String(s)));
    chooser.addEventListener("change", function () { view = chooser.value === "full" ? null : Number(chooser.value); draw(); });
    labelled("view", chooser);
    var save = button("Download JSON", "download this game's record as JSON", download, options);
    save.id = "replay-download";
    root.appendChild(options);
    root.appendChild(controls); // on a phone drawn after the table (CSS order), at the screen's bottom
    var what = el("div", "what");
    what.id = "replay-what";
    what.setAttribute("aria-live", "polite");
    root.appendChild(what);
    var told = el("div", "decision");
    told.id = "replay-decision";
    root.appendChild(told);
    var board = el("div", "felt");
    board.id = "replay-table";
    root.appendChild(board);
    var list = el("div", "steps");
    var ol = el("ol");
    ol.start = 0;
    ol.id = "replay-steps";
    ol.tabIndex = 0;
    ol.setAttribute("role", "listbox");
    ol.setAttribute("aria-label", "steps (up and down arrows step)");
    var items = [];
    for (var i = 0; i <= last; i++) {
      var li = el("li", null, i === 0 ? "deal" : seatName(steps[i - 1][0]) + ": " + actionText(steps[i - 1][1]) +
        (steps[i - 1][3] === "fallback" ? (faults[i] ? " (forfeited here; fallback)" : " (fallback)") : ""));
      li.setAttribute("data-step", String(i));
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", "false");
      li.id = "replay-step-" + i;
      li.addEventListener("click", function (event) { stop(); go(Number(event.currentTarget.getAttribute("data-step"))); });
      items.push(li);
      ol.appendChild(li);
    }
    ol.addEventListener("keydown", function (event) {
      var moves = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
      if (!(event.key in moves) || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      stop();
      go(index + moves[event.key]);
    });
    list.appendChild(ol);
    root.appendChild(list);

    function run() {
      if (timer) clearInterval(timer);
      if (index >= last) go(0);
      timer = setInterval(function () {
        if (index >= last) { stop(); return; }
        go(index + 1);
      }, 1000 / Number(speed.value));
      play.textContent = "Pause";
      play.title = "pause (space)";
      play.setAttribute("aria-label", "pause (space)");
    }
    function stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = null;
      play.textContent = "Play";
      play.title = "play (space)";
      play.setAttribute("aria-label", "play (space)");
      remember(0);
    }
    // The URL names the step; written at most a few times a second (a browser refuses
    // hundreds of history updates), and never while playing.
    var pending = null;
    function remember(delay) {
      if (pending) clearTimeout(pending);
      pending = setTimeout(function () {
        pending = null;
        if (timer || !window.history || !history.replaceState) return;
        var hash = "#step=" + index + (view === null ? "" : "&view=" + view);
        if (location.hash !== hash) {
          try { history.replaceState(null, "", hash); } catch (ignored) { /* a file:// page may refuse */ }
        }
      }, delay);
    }
    function fromUrl() {
      var found = /(?:^#|&)step=(\d+)/.exec(location.hash), seat = /&view=(\d+)/.exec(location.hash);
      if (seat && Number(seat[1]) < players) { view = Number(seat[1]); chooser.value = seat[1]; }
      return found ? Number(found[1]) : null;
    }
    window.addEventListener("hashchange", function () {
      var wanted = fromUrl();
      if (wanted !== null) { stop(); go(wanted); }
    });

    function go(target) {
      if (isNaN(target)) return;
      var previous = index;
      index = Math.max(0, Math.min(last, Math.round(target)));
      if (items[previous]) { items[previous].className = ""; items[previous].setAttribute("aria-selected", "false"); }
      draw();
    }
    // A redraw rebuilds the table and the decision box: a box that had the focus (the score
    // table, a log, the list of actions; each is marked data-focus) gets it back, scrolled
    // as it was, so a keyboard reader is not thrown out of it at every step.
    function focusKept() {
      var active = document.activeElement;
      if (!active || active === document.body || !(board.contains(active) || told.contains(active))) return null;
      var name = active.getAttribute("data-focus");
      return name ? { name: name, left: active.scrollLeft, top: active.scrollTop } : null;
    }
    function focusBack(kept) {
      if (!kept) return;
      var again = null;
      [board, told].forEach(function (box) {
        box.querySelectorAll("[data-focus]").forEach(function (node) {
          if (!again && node.getAttribute("data-focus") === kept.name) again = node;
        });
      });
      if (!again) { ol.focus({ preventScroll: true }); return; } // gone at this step: the step list keeps the keys
      again.focus({ preventScroll: true });
      again.scrollLeft = kept.left;
      again.scrollTop = kept.top;
    }
    function draw() {
      var t = tableAt(index, view);
      var kept = focusKept();
      board.textContent = "";
      board.setAttribute("data-step", String(index));
      viewer.draw(t, view, board, index);
      what.textContent = describe(index);
      decision(told, index, view);
      focusBack(kept);
      counter.textContent = "step " + index + " of " + last;
      slider.value = String(index);
      jump.value = String(index);
      var item = items[index];
      item.className = "now";
      item.setAttribute("aria-selected", "true");
      ol.setAttribute("aria-activedescendant", item.id);
      if (list.scrollHeight > list.clientHeight) {
        list.scrollTop = item.offsetTop - list.clientHeight / 2;
      }
      remember(timer ? 0 : 250);
    }
    document.addEventListener("keydown", function (event) {
      if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
      var target = event.target || {}, tag = target.tagName || "", key = event.key;
      var stepping = key === "ArrowRight" || key === "ArrowLeft" || key === "Home" || key === "End";
      if (tag === "INPUT" || tag === "TEXTAREA" || target.isContentEditable) return; // their own keys
      if (tag === "SELECT" && !stepping) return; // up and down still choose
      // In a box that scrolls sideways (a wide score table, a log), left and right scroll it.
      var box = target.closest ? target.closest("[data-focus]") : null;
      if (box && (key === "ArrowLeft" || key === "ArrowRight") && box.scrollWidth > box.clientWidth) return;
      if (key === " " && (tag === "BUTTON" || tag === "SELECT" || tag === "A" || tag === "SUMMARY")) return;
      if (key === "ArrowRight") { stop(); go(index + 1); }
      else if (key === "ArrowLeft") { stop(); go(index - 1); }
      else if (key === "Home") { stop(); go(0); }
      else if (key === "End") { stop(); go(last); }
      else if (key === " ") { if (timer) stop(); else run(); }
      else return;
      event.preventDefault(); // not a scroll of the page, not a change of the view
    });
    var opened = fromUrl();
    if (opened !== null) index = Math.max(0, Math.min(last, opened));
    draw();
  }
})();
