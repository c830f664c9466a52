/**
 * The embed API's functions, derived from core's operation list: each operation becomes
 * `namespace.method(id?, input?, query?)`, typed by its own schemas (`Static<…>`).
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { OPERATIONS, type Operation, type OperationInput, type OperationResult, type TypedOperation } from "../../core/operations/mod.ts";

/** The name of each operation in the embed API, as its operation file declares it (`embed`). */
export const EMBED_NAMES = Object.fromEntries(OPERATIONS.map((operation) => [operation.id, operation.embed])) as Names;

type Names = { [O in TypedOperation as O["id"]]: O["embed"] };
type OperationId = keyof Names;
type NamespaceOf<Name> = Name extends `${infer Namespace}.${string}` ? Namespace : never;
type MethodOf<Name> = Name extends `${string}.${infer Method}` ? Method : never;
type OperationOf<Id> = Extract<TypedOperation, { id: Id }>;

/** One page of a list, newest or soonest first as the operation orders it. */
export interface Page<T> {
  data: T[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/** A list's query as the embed API takes it: the query schema's fields, each also as the string a URL would carry (`status: "expiring,expired"`). */
export type EmbedQuery<Q> = { [K in keyof Q]: Q[K] | string };

type QueryOf<O> = O extends { query: infer Q extends TSchema } ? EmbedQuery<Static<Q>> : Record<string, never>;
type Data<O> = O extends { response: infer R extends TSchema } ? Static<R> : never;

/** Path parameter first, then the body, then an optional query: the shape of the operation. */
export type ArgumentsOf<O> = [
  ...(O extends { params: TSchema } ? [id: string] : []),
  ...(O extends { body: infer B extends TSchema } ? [input: Static<B>] : []),
  ...(keyof QueryOf<O> extends never ? [] : [query?: QueryOf<O>]),
];

/** A list answers a {@link Page}; anything else answers the envelope's `data`. */
export type ResultOf<O> =
  Data<O> extends { data: Array<infer Item>; meta: { nextCursor: string | null } }
    ? Page<Item>
    : Data<O> extends { data: infer D }
      ? D
      : never;

/** The function an operation becomes. */
export type OperationFunction<O> = (...args: ArgumentsOf<O>) => Promise<ResultOf<O>>;

/** `{ certificates: { add, list, … }, channels: { … }, events: { list } }`. */
export type EmbedFunctions = {
  [Namespace in NamespaceOf<Names[OperationId]>]: {
    [Id in OperationId as NamespaceOf<Names[Id]> extends Namespace ? MethodOf<Names[Id]> : never]: OperationFunction<OperationOf<Id>>;
  };
};

type Invoke = (operation: Operation, input: Partial<OperationInput>) => Promise<OperationResult>;

/** Builds {@link EmbedFunctions} over `invoke`, reading each operation's arguments as its shape says. */
export function embedFunctions(operations: readonly Operation[], invoke: Invoke): EmbedFunctions {
  const namespaces: Record<string, Record<string, (...args: unknown[]) => Promise<unknown>>> = {};
  for (const operation of operations) {
    const [namespace, method] = operation.embed.split(".") as [string, string];
    if (namespaces[namespace]?.[method]) throw new Error(`Two operations are named ${operation.embed} in the embed API.`);
    const pathNames = Object.keys(operation.params?.properties ?? {});
    const takesQuery = Object.keys(operation.query.properties ?? {}).length > 0;
    (namespaces[namespace] ??= {})[method] = async (...args) => {
      const input: Partial<OperationInput> = { params: {} };
      let next = 0;
      for (const param of pathNames) input.params![param] = args[next++] as string;
      if (operation.body) input.body = args[next++];
      if (takesQuery) input.query = queryOf(args[next]);
      const result = await invoke(operation, input);
      return result.nextCursor === undefined ? result.data : { data: result.data, nextCursor: result.nextCursor };
    };
  }
  return namespaces as unknown as EmbedFunctions;
}

/** The query object as given; anything else is left for the pipeline's validation to judge. */
function queryOf(query: unknown): Record<string, unknown> {
  if (query === undefined || query === null) return {};
  return query as Record<string, unknown>;
}
