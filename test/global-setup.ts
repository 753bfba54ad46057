// Replaced by the Postgres template-database setup as the storage tests land.
export default function setup(): void {}
