// One import for apps: the wire types (`User`, `Profile`, `ErrorCode`, `TokenResponse`, …) come with
// `import Gatehouse`, so naming them needs no second `import GatehouseAPI`.
@_exported import GatehouseAPI
