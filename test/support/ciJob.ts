export * from "../../bench/src/ciJob";
