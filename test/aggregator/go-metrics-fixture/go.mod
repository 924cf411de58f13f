module capstan.local/metrics-fixture

go 1.22
