package main

import (
	_ "github.com/google/differential-privacy/go/v3/noise"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/pgproto3"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/viper"
	_ "github.com/xdg-go/scram"
	_ "github.com/xwb1989/sqlparser"
	_ "gonum.org/v1/gonum/mat"
	_ "gonum.org/v1/gonum/optimize"
	_ "modernc.org/sqlite"
)

func main() {}
