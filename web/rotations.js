// The Rotations section (replaced by the rotations helper's page).
export function mountRotations(container) {}
