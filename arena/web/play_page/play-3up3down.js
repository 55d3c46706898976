/* 3UP 3DOWN's moves on the human seat's page (arena/web/play_page/play.js loads it as
   assets/play-3up3down.js): the legal actions as things to click. Cards to lay as 3UP or
   to play are chosen by clicking them (a button each, pressed or not), then one button
   makes the move that the chosen cards name; picking up, turning a 3DOWN card over,
   drawing, refilling, keeping and swapping are buttons of their own. A choice of cards
   matches a legal action by the cards' faces (copies are interchangeable: the rules list
   one action per distinct play). Text goes in with textContent only. */
(function () {
  "use strict";
  (window.ARENA_PLAY = window.ARENA_PLAY || {})["3up3down"] = function (kit) {
    var el = kit.el, viewer = kit.viewer;

    function face(id) { return JSON.stringify(kit.data.cards[String(id)] || null); }
    function faces(list) { return list.map(face).sort().join("|"); }
    function button(parent, text, onClick, cls) {
      var b = el("button", cls || null, text);
      b.type = "button";
      b.addEventListener("click", onClick);
      parent.appendChild(b);
      return b;
    }

    function draw(turn, box) {
      var obs = turn.observation, legal = turn.legal, byType = {};
      legal.forEach(function (action) { (byType[action.type] = byType[action.type] || []).push(action); });
      var setup = !!byType.choose_up;
      var choices = setup ? byType.choose_up : byType.play || [];
      if (choices.length) {
        var pool = setup ? obs.setup_cards : obs.source === "up" ? (obs.up || [])[kit.seat] : obs.hand;
        var usable = {};
        choices.forEach(function (action) { action.cards.forEach(function (id) { usable[face(id)] = true; }); });
        var chosen = [];
        box.appendChild(el("p", "hint", setup
          ? "Choose the three of these six cards to lay face up on your 3DOWN (your 3UP); the other three are your hand."
          : "Choose the cards to play (" + (obs.source === "up" ? "from your 3UP" : "from your hand") +
            "): one or more of one value, or one Clear card. Cards that cannot be played now are greyed."));
        var row = el("div", "choose");
        row.setAttribute("role", "group");
        row.setAttribute("aria-label", setup ? "the six cards you were dealt" : "your cards");
        var go = null;
        (pool || []).forEach(function (item) {
          var id = typeof item === "object" ? item.id : item;
          var b = el("button", "cardbtn");
          b.type = "button";
          b.setAttribute("data-card", String(id));
          b.setAttribute("aria-pressed", "false");
          b.setAttribute("aria-label", kit.cardName(id));
          var picture = kit.card(id);
          picture.setAttribute("aria-hidden", "true");
          b.appendChild(picture);
          if (!usable[face(id)]) b.disabled = true;
          b.addEventListener("click", function () {
            var at = chosen.indexOf(id);
            if (at >= 0) chosen.splice(at, 1); else chosen.push(id);
            b.setAttribute("aria-pressed", at >= 0 ? "false" : "true");
            update();
          });
          row.appendChild(b);
        });
        box.appendChild(row);
        var actions = el("div", "actions-row");
        go = button(actions, setup ? "Lay the chosen three face up" : "Play the chosen cards", function () {
          var action = match();
          if (action) kit.send(action);
        }, "primary");
        go.id = "play-chosen";
        var said = el("span", "hint");
        said.setAttribute("aria-live", "polite");
        actions.appendChild(said);
        box.appendChild(actions);
        var match = function () {
          var wanted = faces(chosen);
          for (var i = 0; i < choices.length; i++) if (faces(choices[i].cards) === wanted) return choices[i];
          return null;
        };
        var update = function () {
          var action = match();
          go.disabled = !action;
          said.textContent = !chosen.length ? "Nothing chosen yet." : action
            ? (setup ? "Lay " : "Play ") + kit.cardsText(chosen) + "."
            : setup ? "Choose exactly three cards." : "These cards cannot be played together now.";
        };
        update();
      }
      var more = el("div", "actions-row");
      (byType.pickup || []).forEach(function (action) {
        button(more, "Pick up the pile", function () { kit.send(action); }).id = "pickup";
      });
      (byType.play_down || []).forEach(function (action) {
        button(more, "Turn over 3DOWN card " + (action.position + 1), function () { kit.send(action); })
          .setAttribute("data-position", String(action.position));
      });
      (byType.draw || []).forEach(function (action) {
        button(more, "Draw a card instead of playing", function () { kit.send(action); }).id = "draw";
      });
      (byType.refill || []).forEach(function (action) {
        button(more, "Draw before the extra action", function () { kit.send(action); }).id = "refill";
      });
      (byType.no_refill || []).forEach(function (action) {
        button(more, "Do not draw", function () { kit.send(action); }).id = "no-refill";
      });
      (byType.keep || []).forEach(function (action) {
        button(more, "Keep my 3UP as it is", function () { kit.send(action); }).id = "keep";
      });
      (byType.swap || []).forEach(function (action) {
        button(more, "Swap 3UP " + kit.cardName(action.up) + " for " + kit.cardName(action.hand), function () {
          kit.send(action);
        });
      });
      if (more.childNodes.length) box.appendChild(more);
      if (byType.pickup && !choices.length) box.appendChild(el("p", "hint", "No card of yours can be played on the pile."));
    }

    var SOURCES = { up: " from its 3UP", down: " from its 3DOWN" };
    function describe(event, who) {
      switch (event.type) {
        case "dealt": return "You are dealt " + kit.cardsText(event.cards) + " to choose your 3UP from.";
        case "deal": return "Each seat gets three cards face down and six to choose from.";
        case "choose_up": return who + (event.cards ? "lays " + kit.cardsText(event.cards) + " as 3UP" : "has chosen its 3UP");
        case "play": return who + "plays " + kit.cardsText(event.cards) + (SOURCES[event.source] || "");
        case "first_player": return who + "plays first";
        default:
          var text = viewer.eventText(event, who);
          if (text) return text;
          var action = viewer.actionText(event);
          return action ? who + action : null;
      }
    }
    return { draw: draw, describe: describe };
  };
})();
