module schedlab/peers/go

go 1.22
