// pouchdb-browser ships no types; the engine uses the part described in pouch.ts.
declare module 'pouchdb-browser' {
  const PouchDB: new (
    name: string,
    options?: import('./pouch').PouchOptions,
  ) => import('./pouch').PouchDatabase;
  export default PouchDB;
}
