package mailbox

// raceEnabled for the external test package.
const RaceEnabled = raceEnabled
