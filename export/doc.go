// Package export writes gpucost's price data for people and programs: offers, observations,
// price history and price changes as CSV, JSON and Parquet, with one column vocabulary for
// every writer (the CLI, the JSON API and `gpucost export` name the same fact the same way).
package export
