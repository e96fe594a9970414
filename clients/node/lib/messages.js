// The messages of the MatchService as the client takes and returns them: types only, for
// JSDoc (the options proto-loader decodes them with are OBJECT_OPTIONS in proto.js).

/**
 * Messages are plain objects with the .proto field names (see README.md).
 * @typedef {Record<string, any>} Message
 * @typedef {Message} MatchEvent `totem.v1.MatchEvent`: `version`, `event` (which of
 *   `player_joined`, `match_ended`, `jungle_speed`, `tribes`, `token_reissued` is set),
 *   `state`
 * @typedef {Message} MatchState `totem.v1.MatchState`: `summary`, and `game` names which
 *   of `jungle_speed`, `tribes` is set
 * @typedef {Message} MatchView `totem.v1.GetMatchResponse`
 * @typedef {Message} ActResponse `totem.v1.ActResponse`: `version`, `events`, `state`, `receipt`
 * @typedef {Message} JungleSpeedCommand `{start: {}}`, `{reveal: {}}` or `{grab: {target}}`
 * @typedef {Message} Command a command for Act: `{jungle_speed: JungleSpeedCommand}`,
 *   `{tribes: TribesCommand}`, or a bare command of the match's game
 * @typedef {'default' | 'duel' | 'arrows'} GrabTargetName
 */

export {};
