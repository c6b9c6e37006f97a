from experiments.paper2.runs import main

main()
