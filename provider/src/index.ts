export * as api from "./api";
