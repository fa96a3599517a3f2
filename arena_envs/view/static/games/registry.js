// The game views' registry. Each file of static/games/ registers a drawing function for the
// environments it knows:
//     ArenaGames.register(["auction_v0"], function (root, payload) { ... });
// The episode page calls ArenaGames.render(env, root, payload): payload is the episode's data as the
// server sends it (see arena_envs/view/game_data.py). A view builds its elements with
// document.createElement and sets text with textContent, never innerHTML: every string in a payload
// comes from a game or a model and is shown as text.
"use strict";
window.ArenaGames = (function () {
  const views = new Map();
  return {
    register(envs, draw) {
      for (const env of envs) views.set(env, draw);
    },
    has(env) {
      return views.has(env);
    },
    render(env, root, payload) {
      const draw = views.get(env);
      if (!draw) return false;
      draw(root, payload);
      root.dataset.gameView = env;
      return true;
    },
  };
})();
