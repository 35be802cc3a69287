// autocannon ships no types and @types/autocannon is not a dependency; the benches use its documented
// programmatic API (https://github.com/mcollina/autocannon#api) through this loose declaration.
declare module 'autocannon' {
  const autocannon: (opts: Record<string, unknown>) => Promise<any>;
  export default autocannon;
}
