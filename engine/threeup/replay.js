/* 3UP 3DOWN in the site's replay viewer: how its cards, actions, events and table are drawn.
   The tables come from replay.py beside this file; the viewer (templates/assets/replay.js)
   loads this script as assets/replay-3up3down.js and passes `kit`, its drawing helpers.
   Everything from the data is put in the page with textContent (kit.el), never as markup. */
(function () {
  "use strict";
  var KINDS = { clear: ["C", "Clear"], clear1: ["C+1", "Clear +1"], clear2: ["C+2", "Clear +2"] };

  (window.ARENA_VIEWERS = window.ARENA_VIEWERS || {})["3up3down"] = function (kit) {
    var el = kit.el, zone = kit.zone, cardRow = kit.cardRow, pile = kit.pile, labelledPile = kit.labelledPile;
    var seatName = kit.seatName, cardName = kit.cardName, cardsText = kit.cardsText, players = kit.players;
    // The official places when the viewer knows the stored result (forfeits last), else the game's.
    var official = kit.places || null, forfeits = kit.forfeits || [];

    function faceName(face) {
      if (face[0] === "number") return face[1] + " " + face[2];
      return KINDS[face[0]][1] + " " + face[2];
    }
    function cardNode(face, id) {
      var node;
      if (face[0] === "number") {
        node = el("span", "pcard c-" + face[2], face[1]);
        node.appendChild(el("small", null, face[2]));
      } else {
        node = el("span", "pcard " + face[0] + " c-" + face[2], KINDS[face[0]][0]);
        node.appendChild(el("small", null, "clear"));
      }
      node.title = cardName(id);
      return node;
    }
    function actionText(action) {
      switch (action.type) {
        case "choose_up": return "chooses 3UP " + cardsText(action.cards);
        case "play": return "plays " + cardsText(action.cards);
        case "play_down": return "turns over 3DOWN position " + action.position;
        case "pickup": return "picks up the pile";
        case "draw": return "draws instead of playing";
        case "refill": return "refills before the extra action";
        case "no_refill": return "does not refill";
        case "swap": return "swaps 3UP " + cardName(action.up) + " for " + cardName(action.hand);
        case "keep": return "keeps its 3UP";
        default: return null;
      }
    }
    function eventText(event, who) {
      switch (event.type) {
        case "clear": return "pile cleared by " + who + "(" + String(event.reason).replace(/_/g, " ") + ")";
        case "pickup": return who + "takes the pile (" + (event.cards || []).length + " cards)";
        case "down_failed": return who + "fails with 3DOWN position " + event.position;
        case "finish":
          if (official && forfeits.indexOf(event.seat) >= 0) return who + "finishes in place " + event.place + " as played (it forfeited: placed last)";
          return who + "finishes in place " + event.place;
        case "reveal_up": return "every 3UP is revealed";
        case "reverse": return who + "reverses the direction";
        case "swap_stacks": return "stacks are swapped";
        case "game_over": return gameOver(event.places || [], event.reason);
        case "refill": case "draw": case "draw_instead": return who + "draws " + event.count;
        default: return null;
      }
    }
    // A game stopped by its turn cap says so: the players still in were placed by the cards they held.
    var CAPPED = "; it reached its turn cap (max_turns): the players still in are placed by the cards they hold, fewer first";
    function gameOver(places, reason) {
      var capped = reason === "max_turns" ? CAPPED : "";
      if (!official) return "game over: places " + places.join(", ") + capped;
      var text = "game over: places " + official.join(", ");
      if (forfeits.length) {
        text += " (" + (forfeits.length === 1 ? "seat " : "seats ") + forfeits.join(", ") + " forfeited: " +
          (forfeits.length === 1 ? "a forfeit takes" : "forfeits share") + " the last place; as played: " + places.join(", ") + ")";
      }
      return text + capped;
    }
    function draw(t, seat, box) {
      var centre = el("div", "centre");
      centre.appendChild(labelledPile("draw pile", pile(t.draw)));
      centre.appendChild(labelledPile("discard pile (" + (t.discard || []).length + ")", cardRow(t.discard, 8)));
      centre.appendChild(labelledPile("removed (" + (t.removed || []).length + ")", cardRow(t.removed, 5)));
      if (t.end && t.end.reason === "max_turns") centre.appendChild(labelledPile("ended at the turn cap", el("div", "count", "placed by the cards held, fewer first")));
      centre.appendChild(labelledPile("turn " + t.turn + " · " + t.phase, el("div", "count", (t.dir === -1 ? "direction reversed" : "seat order") + (t.left > 1 ? " · " + t.left + " actions left" : ""))));
      box.appendChild(centre);
      var grid = el("div", "seats");
      for (var s = 0; s < players; s++) {
        var sb = el("div", "seatbox" + (t.cur === s ? " turn" : ""));
        sb.setAttribute("data-seat", String(s));
        var who = el("div", "who");
        who.appendChild(el("span", null, seatName(s) + (seat === s ? " (this view)" : "")));
        var done = (t.finished || []).indexOf(s);
        if (t.end) {
          var place = official ? official[s] : t.end.places[s];
          var badge = el("span", "place p" + place, place);
          if (forfeits.indexOf(s) >= 0) badge.title = "forfeited: last place, whatever the fallback player did";
          who.appendChild(badge);
        }
        else if (done >= 0) who.appendChild(el("span", "tag", "finished " + (done + 1)));
        sb.appendChild(who);
        if (t.phase === "setup") {
          var offer = seat === null ? (t.setup || [])[s] : (s === seat ? t.setup : null);
          if (offer && offer.length) zone(sb, "dealt six, choosing", cardRow(offer));
          if (s === seat && t.own_up) zone(sb, "own 3UP choice", cardRow(t.own_up));
        }
        zone(sb, "hand", cardRow(t["h" + s]));
        var up = t.up ? t.up[s] : null;
        zone(sb, "3UP", up === null ? el("div", "count", t.chosen && t.chosen[s] ? "chosen, hidden until all have chosen" : "not chosen yet") : cardRow(up));
        zone(sb, "3DOWN", cardRow(t.down[s]));
        grid.appendChild(sb);
      }
      box.appendChild(grid);
    }
    return { faceName: faceName, cardNode: cardNode, actionText: actionText, eventText: eventText, draw: draw };
  };
})();
