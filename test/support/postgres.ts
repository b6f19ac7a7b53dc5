export * from "../../bench/src/postgres";
