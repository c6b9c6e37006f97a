from experiments.paper3.paths import main

main()
