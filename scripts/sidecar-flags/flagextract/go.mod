module flagextract

go 1.22
