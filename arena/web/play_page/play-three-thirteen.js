/* Three Thirteen's moves on the human seat's page (arena/web/play_page/play.js loads it as
   assets/play-three-thirteen.js): draw from the stock or take the discard pile's top card;
   then choose a card of the hand (a button each) and discard it, or go out with it when
   the rules allow, shown with the combinations going out would lay (the server's hint,
   computed from this seat's own hand). Text goes in with textContent only. */
(function () {
  "use strict";
  (window.ARENA_PLAY = window.ARENA_PLAY || {})["three-thirteen"] = function (kit) {
    var el = kit.el, viewer = kit.viewer;

    function button(parent, text, onClick, cls) {
      var b = el("button", cls || null, text);
      b.type = "button";
      b.addEventListener("click", onClick);
      parent.appendChild(b);
      return b;
    }
    function meldRow(melds) {
      var row = el("span");
      melds.forEach(function (meld) {
        var m = el("span", "meld");
        m.setAttribute("role", "group");
        m.setAttribute("aria-label", meld.kind + ": " + kit.cardsText(kit.ids(meld.cards)));
        kit.ids(meld.cards).forEach(function (id) { m.appendChild(kit.card(id)); });
        row.appendChild(m);
      });
      return row;
    }

    function draw(turn, box) {
      var obs = turn.observation, legal = turn.legal, row = el("div", "actions-row");
      if (obs.phase === "draw") {
        box.appendChild(el("p", "hint", "Draw a card: the stock's top card (unseen) or the discard pile's top card."));
        legal.forEach(function (action) {
          var pile = obs.discard_pile || [];
          var top = pile.length ? pile[pile.length - 1].id : null;
          var b = action.source === "stock"
            ? button(row, "Draw from the stock", function () { kit.send(action); }, "primary")
            : button(row, "Take " + kit.cardName(top) + " from the discard pile", function () { kit.send(action); });
          b.id = "draw-" + action.source;
        });
        box.appendChild(row);
        return;
      }
      var discards = {}, outs = {};
      legal.forEach(function (action) {
        if (action.type === "discard") discards[action.card] = action;
        if (action.type === "go_out") outs[action.card] = action;
      });
      box.appendChild(el("p", "hint", "Choose a card of your hand to discard" +
        (Object.keys(outs).length ? ", or go out (below)." : ".")));
      var chosen = null, buttons = [];
      var hand = el("div", "choose");
      hand.setAttribute("role", "group");
      hand.setAttribute("aria-label", "your hand");
      obs.hand.forEach(function (item) {
        var id = item.id;
        var b = el("button", "cardbtn");
        b.type = "button";
        b.setAttribute("data-card", String(id));
        b.setAttribute("aria-pressed", "false");
        b.setAttribute("aria-label", kit.cardName(id) + (discards[id] ? "" : " (just taken: it cannot be discarded now)"));
        var picture = kit.card(id);
        picture.setAttribute("aria-hidden", "true");
        b.appendChild(picture);
        if (!discards[id] && !outs[id]) b.disabled = true;
        b.addEventListener("click", function () {
          chosen = chosen === id ? null : id;
          buttons.forEach(function (other) {
            other.setAttribute("aria-pressed", Number(other.getAttribute("data-card")) === chosen ? "true" : "false");
          });
          update();
        });
        buttons.push(b);
        hand.appendChild(b);
      });
      box.appendChild(hand);
      var go = button(row, "Discard the chosen card", function () {
        if (chosen !== null && discards[chosen]) kit.send(discards[chosen]);
      }, "primary");
      go.id = "discard";
      var said = el("span", "hint");
      said.setAttribute("aria-live", "polite");
      row.appendChild(said);
      box.appendChild(row);
      function update() {
        go.disabled = chosen === null || !discards[chosen];
        said.textContent = chosen === null ? "Nothing chosen yet." : "Discard " + kit.cardName(chosen) + ".";
      }
      update();
      var hints = (turn.hints || {}).go_out || {};
      Object.keys(outs).forEach(function (key) {
        var action = outs[key], line = el("div", "goout");
        var b = button(line, "Go out, discarding " + kit.cardName(action.card), function () { kit.send(action); });
        b.setAttribute("data-go-out", String(action.card));
        line.appendChild(el("span", "hint", "and lay down:"));
        line.appendChild(meldRow(hints[key] || []));
        box.appendChild(line);
      });
    }

    function describe(event, who) {
      switch (event.type) {
        case "draw":
          return who + "draws from the " + (event.source === "stock" ? "stock" : "discard pile") +
            (event.card !== undefined && event.card !== null ? ": " + kit.cardName(event.card) : "");
        case "discard": return who + "discards " + kit.cardName(event.card);
        case "go_out": return who + "goes out, discarding " + kit.cardName(event.card);
        case "round_start":
          return viewer.eventText(event, who) + (event.hand ? "; your hand: " + kit.cardsText(event.hand) : "");
        default:
          return viewer.eventText(event, who) || null;
      }
    }
    return { draw: draw, describe: describe };
  };
})();
